/**
 * Structured output: a zod schema becomes the provider's JSON-schema answer format; the answer is
 * parsed and validated, and an invalid one is fed back to the model, which tries again.
 */
import { z } from "zod";
import { CairnError } from "../../core/errors.js";
import { textOf } from "./messages.js";
import type { Model, ModelRequest, ModelResponse } from "./model.js";
import type { Message } from "./schemas.js";

/** The model's answers did not match the schema within the allowed attempts. Not retried by steps: the same prompt would likely fail again. */
export class ModelOutputInvalidError extends CairnError {
  readonly nonRetryable = true;
  constructor(
    readonly attempts: number,
    readonly problem: string,
    /** The last answer's text (at most 2,000 characters). */
    readonly answer: string,
  ) {
    super(
      "MODEL_OUTPUT_INVALID",
      `The model's answer did not match the schema after ${attempts} attempt(s): ${problem}. Make the prompt or the schema clearer, or allow more attempts.`,
    );
  }
}

/** Options of {@link generateObject}. */
export interface GenerateObjectOptions {
  /** The format's name sent to the provider. Default `answer`. */
  name?: string;
  description?: string;
  /** Calls at most, the first included. Default 3. */
  attempts?: number;
}

/** What {@link generateObject} resolves with. */
export interface GenerateObjectResult<T> {
  object: T;
  /** The response that held the valid answer. */
  response: ModelResponse;
  /** Calls made, the first included. */
  attempts: number;
  /** Every response, in order (for usage and cost: each was billed). */
  responses: ModelResponse[];
}

/**
 * Asks `model` for an answer matching `schema` (a zod 4 schema, sent as JSON Schema in the provider's
 * answer format), parses and validates it, and on an invalid answer sends the problem back and asks
 * again, up to `attempts` calls. Inside a workflow, call it in a step: the result is then journaled.
 *
 * @example
 * ```ts
 * const { object } = await generateObject(model, { messages: [{ role: "user", content: "Capital of France?" }] }, z.object({ city: z.string() }));
 * ```
 */
export async function generateObject<T>(
  model: Model,
  request: ModelRequest,
  schema: z.ZodType<T>,
  options: GenerateObjectOptions = {},
): Promise<GenerateObjectResult<T>> {
  const attempts = options.attempts ?? 3;
  const format = {
    name: options.name ?? "answer",
    schema: z.toJSONSchema(schema) as Record<string, unknown>,
    ...(options.description ? { description: options.description } : {}),
  };
  let messages: Message[] = request.messages;
  const responses: ModelResponse[] = [];
  let problem = "";
  let answer = "";
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const response = await model.generate({ ...request, messages, responseFormat: format });
    responses.push(response);
    answer = textOf(response.content);
    problem = "";
    let value: unknown;
    try {
      value = JSON.parse(answer);
    } catch (error) {
      problem = `it is not JSON (${(error as Error).message})`;
    }
    if (!problem) {
      const parsed = schema.safeParse(value);
      if (parsed.success) return { object: parsed.data, response, attempts: attempt, responses };
      problem = parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
    }
    messages = [
      ...messages,
      { role: "assistant", content: response.content.filter((b) => b.type === "text") },
      { role: "user", content: `Your answer did not match the required JSON schema: ${problem}. Answer again with only JSON that matches it.` },
    ];
  }
  throw new ModelOutputInvalidError(attempts, problem, answer.slice(0, 2000));
}
