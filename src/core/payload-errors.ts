import { CairnError } from "./errors.js";

/**
 * A stored payload cannot be trusted: an offloaded blob whose bytes no longer match the
 * SHA-256 its reference names (or that is missing), or an encrypted payload whose
 * authentication tag does not verify. Cairn never returns such data; fix or restore the row.
 */
export class PayloadCorruptError extends CairnError {
  constructor(
    /** Where the payload lives, e.g. `run "r1" journal seq 5` or `run "r1" input`. */
    readonly where: string,
    /** The blob's SHA-256 (hex), when the payload was offloaded. */
    readonly hash: string | null,
    detail: string,
  ) {
    super(
      "PAYLOAD_CORRUPT",
      `The payload of ${where}${hash ? ` (blob sha256:${hash})` : ""} is corrupt: ${detail}. Cairn refuses to return it; restore the row from a backup (see docs/operations/payloads.md).`,
    );
  }
}

/** An encrypted payload names a key id the keyring does not hold. */
export class PayloadKeyMissingError extends CairnError {
  constructor(
    /** The key id recorded with the ciphertext. */
    readonly keyId: string,
    where?: string,
  ) {
    super(
      "PAYLOAD_KEY_MISSING",
      `${where ? `The payload of ${where} is` : "A payload is"} encrypted with key "${keyId}", which is not in the keyring: add it to CAIRN_ENCRYPTION_KEYS ("${keyId}:<base64 32 bytes>,…") or to the codec's keys.`,
    );
  }
}
