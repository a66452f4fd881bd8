// Image and file inputs through the real SDKs against the local provider server: each adapter's
// mapping of image and file blocks, read back from the JSON the server received; what a provider
// cannot take is refused before anything is sent, and malformed blocks fail validation by name.
import { describe, expect, it } from "vitest";
import { estimateTokens } from "../src/agent/model/estimate.js";
import type { Model, ModelRequest } from "../src/agent/model/model.js";
import type { UserBlock } from "../src/agent/model/schemas.js";
import { ScriptedModel } from "../src/agent/model/scripted.js";
import { sdkModels, useProviderServer } from "./support/sdk-models.js";

const server = useProviderServer();

const { anthropic, openai, "ai-sdk": aiSdk } = sdkModels(server);
const MODELS: Record<string, () => Model> = { anthropic, openai, "ai-sdk": aiSdk };

const PNG = Buffer.from("\x89PNG\r\n\x1a\nfake image bytes").toString("base64");
const PDF = Buffer.from("%PDF-1.7 fake document").toString("base64");
const TEXT = Buffer.from("plain notes, line one").toString("base64");

const BLOCKS: UserBlock[] = [
  { type: "text", text: "What is in these?" },
  { type: "image", source: { type: "base64", mediaType: "image/png", data: PNG }, detail: "high" },
  { type: "image", source: { type: "url", url: "https://example.com/cat.jpg" } },
  { type: "file", source: { type: "base64", mediaType: "application/pdf", data: PDF }, filename: "report.pdf" },
  { type: "file", source: { type: "url", url: "https://example.com/paper.pdf", mediaType: "application/pdf" } },
];

async function send(name: string, blocks: UserBlock[], stream = false) {
  server.enqueue({ text: "A cat and a report." });
  const before = server.requests.length;
  const request: ModelRequest = { messages: [{ role: "user", content: blocks }], maxTokens: 100 };
  if (stream) request.onDelta = () => undefined;
  const response = await MODELS[name]!().generate(request);
  expect(response.content).toMatchObject([{ type: "text", text: "A cat and a report." }]);
  expect(server.requests.length).toBe(before + 1);
  return server.requests.at(-1)!.body;
}

describe("image and file inputs on the wire", () => {
  it.each([false, true])("anthropic: image and document blocks (stream %s)", async (stream) => {
    const body = await send(
      "anthropic",
      [...BLOCKS, { type: "file", source: { type: "base64", mediaType: "text/plain", data: TEXT }, filename: "notes.txt" }],
      stream,
    );
    expect(body.messages[0].content).toEqual([
      { type: "text", text: "What is in these?" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
      { type: "image", source: { type: "url", url: "https://example.com/cat.jpg" } },
      { type: "document", title: "report.pdf", source: { type: "base64", media_type: "application/pdf", data: PDF } },
      { type: "document", source: { type: "url", url: "https://example.com/paper.pdf" } },
      { type: "document", title: "notes.txt", source: { type: "text", media_type: "text/plain", data: "plain notes, line one" } },
    ]);
  });

  it.each([false, true])("openai: input_image and input_file parts (stream %s)", async (stream) => {
    const body = await send("openai", [...BLOCKS, { type: "file", source: { type: "file_id", fileId: "file-abc123" } }], stream);
    expect(body.input[0]).toEqual({
      role: "user",
      content: [
        { type: "input_text", text: "What is in these?" },
        { type: "input_image", detail: "high", image_url: `data:image/png;base64,${PNG}` },
        { type: "input_image", detail: "auto", image_url: "https://example.com/cat.jpg" },
        { type: "input_file", filename: "report.pdf", file_data: `data:application/pdf;base64,${PDF}` },
        { type: "input_file", file_url: "https://example.com/paper.pdf" },
        { type: "input_file", file_id: "file-abc123" },
      ],
    });
  });

  it.each([false, true])("ai-sdk (OpenAI Responses provider): file parts become input_image and input_file (stream %s)", async (stream) => {
    const body = await send("ai-sdk", [...BLOCKS, { type: "file", source: { type: "file_id", fileId: "file-abc123", mediaType: "application/pdf" } }], stream);
    const content = body.input[0].content as Record<string, unknown>[];
    expect(content[0]).toEqual({ type: "input_text", text: "What is in these?" });
    expect(content[1]).toMatchObject({ type: "input_image", image_url: `data:image/png;base64,${PNG}` });
    expect(content[2]).toMatchObject({ type: "input_image", image_url: "https://example.com/cat.jpg" });
    expect(content[3]).toMatchObject({ type: "input_file", filename: "report.pdf", file_data: `data:application/pdf;base64,${PDF}` });
    expect(content[4]).toMatchObject({ type: "input_file", file_url: "https://example.com/paper.pdf" });
    expect(content[5]).toMatchObject({ type: "input_file", file_id: "file-abc123" });
  });

  it("anthropic refuses a document type it cannot read before sending anything, and the step does not retry it", async () => {
    const before = server.requests.length;
    const docx = {
      type: "file" as const,
      source: { type: "base64" as const, mediaType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document", data: PDF },
      filename: "plan.docx",
    };
    const failure = await MODELS["anthropic"]!()
      .generate({ messages: [{ role: "user", content: [docx] }] })
      .catch((error: unknown) => error as Error & { code?: string; nonRetryable?: boolean });
    expect(failure).toMatchObject({ code: "MODEL_INPUT_UNSUPPORTED", nonRetryable: true });
    expect((failure as Error).message).toContain("plan.docx");
    expect((failure as Error).message).toContain("application/pdf");
    expect(server.requests.length).toBe(before);
  });

  it.each([
    [
      { type: "image", source: { type: "base64", mediaType: "image/tiff", data: PNG } },
      /messages\.0\.content\.0\.source\.mediaType: must be one of image\/png, image\/jpeg/,
    ],
    [{ type: "image", source: { type: "base64", mediaType: "image/png", data: `data:image/png;base64,${PNG}` } }, /plain base64/],
    [{ type: "file", source: { type: "url", url: "file:///etc/passwd" } }, /http\(s\) URL/],
    [{ type: "image", source: { type: "bytes", data: PNG } }, /messages\.0\.content\.0\.source\.type: .*'base64' \| 'url' \| 'file_id'/],
  ])("malformed blocks fail validation, naming the field: %j", async (block, message) => {
    const before = server.requests.length;
    await expect(MODELS["openai"]!().generate({ messages: [{ role: "user", content: [block as UserBlock] }] })).rejects.toThrow(message);
    expect(server.requests.length).toBe(before);
  });

  it("ScriptedModel takes image and file blocks, and budgets count them", async () => {
    const model = new ScriptedModel([{ content: "seen", expect: (request) => request.messages[0]!.content.length === BLOCKS.length }]);
    const response = await model.generate({ messages: [{ role: "user", content: BLOCKS }] });
    expect(response.content).toEqual([{ type: "text", text: "seen" }]);
    const withMedia = estimateTokens({ messages: [{ role: "user", content: BLOCKS }] }).inputTokens;
    const textOnly = estimateTokens({ messages: [{ role: "user", content: [BLOCKS[0]!] }] }).inputTokens;
    expect(withMedia - textOnly).toBeGreaterThanOrEqual(4 * 1600);
  });
});
