import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
import { namespaceSchema } from "../../core/api-schemas.js";
import { TokenNotFoundError } from "../../core/errors.js";
import type { TokenScope } from "../../core/store.js";
import { issueToken, tokenView } from "../../server/auth/tokens.js";
import { auditView } from "../../server/routes/security.js";
import { idArg, intArg, unitDurationArg } from "../args.js";
import { jsonOption, note, print, printJson, storeOption, withEngine, type JsonOptions, type StoreOptions } from "../context.js";

const SCOPES: readonly TokenScope[] = ["read", "write", "admin"];

interface CreateOptions extends StoreOptions, JsonOptions {
  name: string;
  scope: TokenScope[];
  namespace?: string;
  expiresIn?: number;
}

interface AuditOptions extends StoreOptions, JsonOptions {
  limit: number;
  actor?: string;
  action?: string;
  target?: string;
}

function scopesArg(value: string): TokenScope[] {
  const scopes = value.split(",").map((s) => s.trim());
  for (const scope of scopes)
    if (!(SCOPES as string[]).includes(scope))
      throw new InvalidArgumentError(`Unknown scope "${scope}". Use ${SCOPES.join(", ")}, or several separated by commas.`);
  return scopes as TokenScope[];
}

function namespaceArg(value: string): string {
  const parsed = namespaceSchema.safeParse(value);
  if (!parsed.success) throw new InvalidArgumentError(`Namespace ${parsed.error.issues[0]?.message ?? "is invalid"}.`);
  return parsed.data;
}

/** Registers `cairn token create|list|revoke` and `cairn audit`. */
export function registerSecurityCommands(program: Command): void {
  const token = program.command("token").description("manage API tokens of `cairn serve --auth tokens`");
  const create = token
    .command("create")
    .description("create an API token; it is printed once, on stdout, and only its hash is stored")
    .requiredOption("--name <name>", "a label; the audit log names the token by it", idArg("name"))
    .option("--scope <scopes>", "read (GETs), write (start, events, cancel, retry, answer), admin (tokens, audit); comma-separated", scopesArg, ["read"])
    .option("--namespace <ns>", "restrict the token to runs whose id starts with <ns>/", namespaceArg)
    .option("--expires-in <duration>", "the token stops working after this long, e.g. 30d or 12h (default: never)", unitDurationArg);
  storeOption(jsonOption(create)).action(createToken);
  const list = token.command("list").description("list API tokens (never their secrets)");
  storeOption(jsonOption(list)).action(listTokens);
  const revoke = token.command("revoke").description("revoke an API token at once").argument("<id>", "the token id, as listed", idArg("token id"));
  storeOption(jsonOption(revoke)).action(revokeToken);

  const audit = program
    .command("audit")
    .description("show the audit log: who started, cancelled, retried, answered, and changed tokens, newest first")
    .option("--limit <n>", "entries to show", intArg(1, 1000), 50)
    .option("--actor <actor>", "only this actor, e.g. token:ci or cli:ann")
    .option("--action <action>", "only this action, e.g. run.cancel")
    .option("--target <target>", "only this target, e.g. a run id");
  storeOption(jsonOption(audit)).action(showAudit);
}

async function createToken(options: CreateOptions): Promise<void> {
  await withEngine(
    options,
    [],
    async (engine, cli) => {
      const { token, record } = await issueToken(
        cli.store,
        {
          name: options.name,
          scopes: options.scope,
          namespace: options.namespace ?? null,
          ...(options.expiresIn === undefined ? {} : { expiresIn: options.expiresIn }),
        },
        Date.now(),
      );
      await cli.audit("token.create", record.id, {
        name: record.name,
        scopes: record.scopes,
        namespace: record.namespace,
        expiresAt: record.expiresAt,
      });
      if (options.json) return printJson({ token, record: tokenView(record) });
      print(token);
      note(
        `Created token ${record.id} "${record.name}" (${record.scopes.join(", ")}${record.namespace ? `, namespace ${record.namespace}/` : ""}${record.expiresAt === null ? "" : `, expires ${new Date(record.expiresAt).toISOString()}`}).`,
        "The line above is the only copy of the token: keep it in a secret store. Send it as `Authorization: Bearer <token>`.",
      );
    },
    { create: true },
  );
}

async function listTokens(options: StoreOptions & JsonOptions): Promise<void> {
  await withEngine(options, [], async (engine, cli) => {
    const tokens = (await cli.store.listTokens()).map(tokenView);
    if (options.json) return printJson(tokens);
    if (tokens.length === 0) return print("No API tokens. Create one with: npx cairn token create --name <who> --scope read");
    for (const t of tokens)
      print(
        `${t.id}  ${t.name.padEnd(16)}  ${t.scopes.join(",").padEnd(16)}  ${(t.namespace ?? "*").padEnd(12)}  created ${t.createdAt.toISOString()}  ${expiryText(t.expiresAt)}${t.revokedAt ? `  REVOKED ${t.revokedAt.toISOString()}` : ""}`,
      );
  });
}

function expiryText(expiresAt: Date | null): string {
  if (expiresAt === null) return "never expires";
  return `${expiresAt.getTime() <= Date.now() ? "EXPIRED" : "expires"} ${expiresAt.toISOString()}`;
}

async function revokeToken(id: string, options: StoreOptions & JsonOptions): Promise<void> {
  await withEngine(options, [], async (engine, cli) => {
    if (!(await cli.store.revokeToken(id, Date.now()))) throw new TokenNotFoundError(id);
    await cli.audit("token.revoke", id);
    if (options.json) return printJson({ id, revoked: true });
    print(`Revoked token ${id}; requests with it now get 401.`);
  });
}

async function showAudit(options: AuditOptions): Promise<void> {
  await withEngine(options, [], async (engine, cli) => {
    const entries = (await cli.store.listAudit({ limit: options.limit, actor: options.actor, action: options.action, target: options.target })).map(auditView);
    if (options.json) return printJson(entries);
    if (entries.length === 0) return print("The audit log is empty.");
    for (const e of entries)
      print(`${e.at.toISOString()}  ${e.actor.padEnd(20)}  ${e.action.padEnd(14)}  ${e.target ?? "-"}${e.detail ? `  ${JSON.stringify(e.detail)}` : ""}`);
  });
}
