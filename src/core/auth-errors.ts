import { CairnError } from "./cairn-error.js";

// The HTTP API's errors of API tokens and scopes (terminal failures; re-exported by core/errors.ts).

/** A request had no API token, or one that is unknown, malformed or revoked. HTTP 401. */
export class UnauthorizedError extends CairnError {
  constructor(message = "This server needs an API token: send `Authorization: Bearer cairn_…` (create one with `cairn token create`).") {
    super("UNAUTHORIZED", message);
  }
}

/** A request's API token is past its expiry (`cairn token create --expires-in`). HTTP 401. */
export class TokenExpiredError extends CairnError {
  constructor(
    readonly tokenName: string,
    readonly expiredAt: number,
  ) {
    super(
      "TOKEN_EXPIRED",
      `The API token "${tokenName}" expired at ${new Date(expiredAt).toISOString()}. Create a new one with \`cairn token create --name <who> --scope <scopes> --expires-in <duration>\`.`,
    );
  }
}

/** The API token lacks the scope the request needs. HTTP 403. */
export class ForbiddenError extends CairnError {
  constructor(
    readonly scope: string,
    message?: string,
  ) {
    super(
      "FORBIDDEN",
      message ?? `This API token lacks the "${scope}" scope this request needs. Use a token with it (\`cairn token create --scope ${scope}\`).`,
    );
  }
}

/** No API token has this id. */
export class TokenNotFoundError extends CairnError {
  constructor(readonly tokenId: string) {
    super(
      "TOKEN_NOT_FOUND",
      `API token "${tokenId}" does not exist or is already revoked. Revoke takes the token's id, not its name: the first column of \`cairn token list\`.`,
    );
  }
}
