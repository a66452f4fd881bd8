/**
 * Errors of the model layer. Codes live in core's `ErrorCode`; each has `docs/errors/<code>.md`.
 */
import { CairnError } from "../../core/errors.js";

/** A `ScriptedModel` was called more often than its script has turns. Terminal: the test or example is wrong. */
export class ScriptExhaustedError extends CairnError {
  readonly nonRetryable = true;
  constructor(
    readonly turns: number,
    readonly turnIndex: number,
    detail: string,
  ) {
    super(
      "MODEL_SCRIPT_EXHAUSTED",
      `ScriptedModel has ${turns} turn(s) but was asked for turn ${turnIndex + 1} (${detail}). Add a turn to the script, or check why the agent made another call.`,
    );
  }
}

/** A `ScriptedModel` turn's expectation rejected the request it was called with, or the request was not a valid transcript. */
export class ScriptMismatchError extends CairnError {
  readonly nonRetryable = true;
  constructor(
    readonly turnIndex: number,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super("MODEL_SCRIPT_MISMATCH", `ScriptedModel turn ${turnIndex + 1}: ${detail}`, options);
  }
}

/** No price is known for a model id, so its cost cannot be computed. */
export class UnknownModelPriceError extends CairnError {
  readonly nonRetryable = true;
  constructor(
    readonly modelId: string,
    readonly tableVersion: string,
  ) {
    super(
      "MODEL_PRICE_UNKNOWN",
      `No price for model "${modelId}" in price table ${tableVersion}. Pass one in \`prices\` (USD per million tokens), e.g. { "${modelId}": { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } }.`,
    );
  }
}

/** An adapter had to build its provider client but the provider's SDK is not installed. */
export class ModelSdkMissingError extends CairnError {
  readonly nonRetryable = true;
  constructor(
    readonly packageName: string,
    options?: { cause?: unknown },
  ) {
    super(
      "MODEL_SDK_MISSING",
      `The package "${packageName}" is needed to call this provider but could not be loaded. Install it (npm install ${packageName}) or pass a client instance.`,
      options,
    );
  }
}

/**
 * A request holds a part the provider cannot take (e.g. a Word document for Anthropic, which reads
 * PDF and plain text). Terminal: sending it again cannot help; convert the input or use another model.
 */
export class ModelInputUnsupportedError extends CairnError {
  readonly nonRetryable = true;
  constructor(
    readonly provider: string,
    detail: string,
  ) {
    super("MODEL_INPUT_UNSUPPORTED", `${provider} cannot take this input: ${detail}`);
  }
}
