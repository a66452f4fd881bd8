/**
 * A scripted stand-in for an LLM, for the examples and their tests.
 *
 * It is not a language model: each call is answered by the first rule whose
 * pattern matches the prompt, and a prompt that no rule matches is an error.
 * It makes no network calls, so examples run offline and deterministically.
 * Token usage is counted as whitespace-separated words, which is enough to
 * show usage accounting without pretending to be a real tokenizer.
 *
 * @example
 * const model = createScriptedModel([
 *   { match: /^Plan research on (.+)$/m, respond: (m) => `1. What is ${m[1]}?` },
 * ]);
 * const { text } = await model.complete({ prompt: "Plan research on batteries" });
 */

/** What a call asks. */
export interface CompletionRequest {
  prompt: string;
  /** Optional system text; scripted rules match the prompt only. */
  system?: string;
}

/** Token counts (here: word counts) of one call or of all calls. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

/** What a call returns. */
export interface Completion {
  text: string;
  usage: Usage;
  /** Index of the script rule that answered. */
  rule: number;
}

/** One scripted answer: the first rule whose `match` matches the prompt answers it. */
export interface ScriptRule {
  match: RegExp;
  respond: (match: RegExpExecArray, request: CompletionRequest) => string;
}

/** The `complete` interface the examples program against. */
export interface Model {
  complete(request: CompletionRequest): Promise<Completion>;
}

/** A model that also reports what it was asked. */
export interface ScriptedModel extends Model {
  /** Totals over every call this process made. */
  readonly usage: Readonly<Usage & { calls: number }>;
  /** How many calls each rule answered, by rule index. */
  readonly callsByRule: readonly number[];
}

/** Thrown when no rule matches a prompt: a script gap, not a model failure. */
export class UnscriptedPromptError extends Error {
  constructor(prompt: string) {
    const shown = prompt.length > 120 ? `${prompt.slice(0, 117)}...` : prompt;
    super(`No scripted rule matches the prompt ${JSON.stringify(shown)}. Add a rule to the script.`);
    this.name = "UnscriptedPromptError";
  }
}

function words(text: string): number {
  const trimmed = text.trim();
  return trimmed === "" ? 0 : trimmed.split(/\s+/).length;
}

/** Creates a deterministic scripted model from rules tried in order. */
export function createScriptedModel(script: readonly ScriptRule[]): ScriptedModel {
  const totals = { calls: 0, inputTokens: 0, outputTokens: 0 };
  const callsByRule = script.map(() => 0);
  return {
    get usage() {
      return { ...totals };
    },
    get callsByRule() {
      return [...callsByRule];
    },
    async complete(request) {
      for (const [index, rule] of script.entries()) {
        // A fresh RegExp per call so a /g or /y rule's lastIndex never leaks between calls.
        const match = new RegExp(rule.match.source, rule.match.flags).exec(request.prompt);
        if (!match) continue;
        const text = rule.respond(match, request);
        const usage = { inputTokens: words(request.system ?? "") + words(request.prompt), outputTokens: words(text) };
        totals.calls += 1;
        totals.inputTokens += usage.inputTokens;
        totals.outputTokens += usage.outputTokens;
        callsByRule[index] = (callsByRule[index] ?? 0) + 1;
        return { text, usage, rule: index };
      }
      throw new UnscriptedPromptError(request.prompt);
    },
  };
}
