import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { CairnError, ValidationError } from "../core/errors.js";
import { isTerminal } from "../core/run.js";
import type { Store } from "../core/store.js";
import { serializeError } from "../core/serialize.js";
import type { EngineLogger } from "./logger.js";

/** What a provider is asked for: which credential, for which run, op and scope. */
export interface CredentialRequest {
  /** The credential's name (`ctx.credential("github")`). */
  name: string;
  runId: string;
  /** The op key of the use (`credential:github#0`). */
  opKey: string;
  /** What the run says it needs it for (`{ scope: "repo:read" }`), or null. */
  scope: string | null;
}

/**
 * Where a credential comes from. `resolve` is called at every use, so a rotated secret is picked up
 * by the next use; `revoke`, when given, is called once per run and credential when the run ends
 * (completed, failed, cancelled, past its deadline).
 */
export interface CredentialProvider {
  resolve(request: CredentialRequest): Promise<string> | string;
  revoke?(request: Omit<CredentialRequest, "opKey" | "scope">): Promise<void> | void;
}

/** A provider reading an environment variable at each use. */
export function envCredential(variable: string): CredentialProvider {
  if (typeof variable !== "string" || variable === "") throw new ValidationError("envCredential needs the name of an environment variable.");
  return {
    resolve: ({ name }) => {
      const value = process.env[variable];
      if (value === undefined || value === "") throw new CredentialUnavailableError(name, `environment variable ${variable} is not set`);
      return value;
    },
  };
}

/** A provider reading a file at each use (trailing whitespace trimmed): a mounted secret that rotates in place. */
export function fileCredential(path: string): CredentialProvider {
  if (typeof path !== "string" || path === "") throw new ValidationError("fileCredential needs a file path.");
  return {
    resolve: async ({ name }) => {
      try {
        return (await readFile(path, "utf8")).trimEnd();
      } catch (error) {
        throw new CredentialUnavailableError(name, `file ${path} could not be read (${(error as Error).message})`);
      }
    },
  };
}

/** A provider running a command at each use (its trimmed stdout), e.g. `["vault", "kv", "get", "-field=token", "secret/github"]`. */
export function commandCredential(command: readonly string[]): CredentialProvider {
  if (!Array.isArray(command) || command.length === 0) throw new ValidationError("commandCredential needs a command: [program, ...args].");
  return {
    resolve: ({ name }) =>
      new Promise((resolve, reject) => {
        execFile(command[0]!, command.slice(1), { timeout: 30_000 }, (error, stdout) => {
          if (error) reject(new CredentialUnavailableError(name, `command ${command[0]} failed (${error.message})`));
          else resolve(stdout.trim());
        });
      }),
  };
}

/** A credential could not be resolved: docs/errors/CREDENTIAL_UNAVAILABLE.md. */
export class CredentialUnavailableError extends CairnError {
  constructor(
    readonly credential: string,
    why: string,
  ) {
    super("CREDENTIAL_UNAVAILABLE", `Credential "${credential}" is not available: ${why}.`);
  }
}

/** A credential was used after the run's credentials were revoked: docs/errors/CREDENTIAL_REVOKED.md. */
export class CredentialRevokedError extends CairnError {
  /** A step that hits it fails at once: retrying cannot bring a revoked credential back. */
  readonly nonRetryable = true;
  constructor(
    readonly credential: string,
    readonly runId: string,
  ) {
    super(
      "CREDENTIAL_REVOKED",
      `Credential "${credential}" was revoked for run "${runId}" when the run ended (completed, failed, cancelled or past its deadline); it cannot be used again by this run.`,
    );
  }
}

const ACTOR = "engine:credentials";

/**
 * Hands credentials to runs: resolved at each use from its provider (never journaled), each use
 * written to the audit log (`credential.use`: run, op, scope), revoked once per run and name when
 * the run ends (`credential.revoke`, the provider's `revoke` called). The audit log is the durable
 * record of both, so revocation holds across processes and restarts.
 */
export class CredentialBroker {
  constructor(
    private readonly providers: ReadonlyMap<string, CredentialProvider>,
    private readonly store: Store,
    private readonly clock: () => number,
    private readonly logger: EngineLogger,
  ) {}

  /** One use by a run: refused once revoked; the provider's current value; audited. */
  async use(request: CredentialRequest): Promise<string> {
    const provider = this.providers.get(request.name);
    if (!provider) {
      const known = [...this.providers.keys()];
      throw new CredentialUnavailableError(
        request.name,
        `no provider is registered under that name (createEngine({ credentials }) has ${known.length > 0 ? known.join(", ") : "none"})`,
      );
    }
    if (await this.revoked(request.runId, request.name)) throw new CredentialRevokedError(request.name, request.runId);
    const value = await provider.resolve(request);
    if (typeof value !== "string" || value === "") throw new CredentialUnavailableError(request.name, "its provider returned no value");
    await this.store.appendAudit({
      at: this.clock(),
      actor: ACTOR,
      action: "credential.use",
      target: request.runId,
      detail: { credential: request.name, opKey: request.opKey, scope: request.scope },
    });
    return value;
  }

  private async revoked(runId: string, name: string): Promise<boolean> {
    const entries = await this.store.listAudit({ action: "credential.revoke", target: runId, limit: 1000 });
    return entries.some((entry) => entry.detail?.credential === name);
  }

  /** Revokes every credential the run used (once each), if the run has ended. Errors are logged, not thrown. */
  async settle(runId: string): Promise<void> {
    try {
      const run = await this.store.getRun(runId);
      if (!run || !isTerminal(run.status)) return;
      const used = await this.store.listAudit({ action: "credential.use", target: runId, limit: 1000 });
      const names = new Set(used.map((entry) => String(entry.detail?.credential)));
      for (const name of names) {
        if (await this.revoked(runId, name)) continue;
        // Journaled first, so a crash between the two leaves the credential revoked (refused), not usable.
        await this.store.appendAudit({
          at: this.clock(),
          actor: ACTOR,
          action: "credential.revoke",
          target: runId,
          detail: { credential: name, status: run.status },
        });
        await this.providers.get(name)?.revoke?.({ name, runId });
      }
    } catch (error) {
      this.logger.log("warn", "credentials of an ended run could not be revoked", { runId, error: serializeError(error) });
    }
  }
}

/** Checks `createEngine({ credentials })`: a map of names to providers. */
export function credentialProviders(given: unknown): Map<string, CredentialProvider> {
  const providers = new Map<string, CredentialProvider>();
  if (given === undefined) return providers;
  if (!given || typeof given !== "object")
    throw new ValidationError('createEngine: credentials must be { name: provider }, e.g. { github: envCredential("GITHUB_TOKEN") }.');
  for (const [name, provider] of Object.entries(given)) {
    if (!provider || typeof (provider as CredentialProvider).resolve !== "function") {
      throw new ValidationError(
        `createEngine: credential "${name}" needs a provider with a resolve function (envCredential, fileCredential, commandCredential, or { resolve, revoke? }).`,
      );
    }
    providers.set(name, provider as CredentialProvider);
  }
  return providers;
}
