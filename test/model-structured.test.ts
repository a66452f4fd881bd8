// Structured output through the real SDKs against the local provider server: the zod schema goes out
// as each provider's JSON-schema answer format; an invalid answer is sent back and asked again.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { Model } from "../src/agent/model/model.js";
import { generateObject, ModelOutputInvalidError } from "../src/agent/model/structured.js";
import type { LedgerEntry } from "./support/provider-server/index.mjs";
import { sdkModels, useProviderServer } from "./support/sdk-models.js";

const server = useProviderServer();

const { anthropic, openai, "ai-sdk": responses, "ai-sdk chat": chat } = sdkModels(server);
const MODELS: Record<string, () => Model> = { anthropic, openai, "ai-sdk responses": responses, "ai-sdk chat": chat };

/** The JSON schema a request carried, wherever its format puts it. */
function sentSchema(name: string, entry: LedgerEntry): { type?: string; properties?: Record<string, unknown> } | undefined {
  const body = entry.body;
  if (name === "anthropic") return body.output_config?.format?.type === "json_schema" ? body.output_config.format.schema : undefined;
  if (name === "ai-sdk chat") return body.response_format?.type === "json_schema" ? body.response_format.json_schema.schema : undefined;
  return body.text?.format?.type === "json_schema" ? body.text.format.schema : undefined;
}

const City = z.object({ city: z.string(), population: z.number().int() });

describe.each(Object.keys(MODELS))("%s: structured output", (name) => {
  it("sends the schema as the provider's answer format, feeds an invalid answer back, and returns the validated object", async () => {
    server.enqueue({ text: '{"city": "Paris", "population": "lots"}' }, { text: '{"city": "Paris", "population": 2100000}' });
    const before = server.requests.length;
    const result = await generateObject(MODELS[name]!(), { messages: [{ role: "user", content: "Largest city of France?" }] }, City, { name: "city" });
    expect(result.object).toEqual({ city: "Paris", population: 2100000 });
    expect(result.attempts).toBe(2);
    const [first, second] = server.requests.slice(before);
    expect(server.requests.length - before).toBe(2);
    expect(sentSchema(name, first!)?.properties).toHaveProperty("population");
    // The second request carries the invalid answer and what was wrong with it.
    const sent = JSON.stringify(second!.body);
    expect(sent).toContain("did not match the required JSON schema");
    expect(sent).toContain("population");
  });

  it("gives up after `attempts` calls with MODEL_OUTPUT_INVALID", async () => {
    server.enqueue({ text: "Paris, I think." }, { text: "not json either" });
    const error = await generateObject(MODELS[name]!(), { messages: [{ role: "user", content: "Largest city?" }] }, City, { attempts: 2 }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ModelOutputInvalidError);
    expect((error as ModelOutputInvalidError).code).toBe("MODEL_OUTPUT_INVALID");
    expect((error as ModelOutputInvalidError).message).toContain("not JSON");
  });
});
