// Wire formats of the providers the local test server speaks: a scripted reply (text, thinking,
// tool calls, usage) rendered as an OpenAI Responses, OpenAI Chat Completions or Anthropic Messages
// response, as one JSON body or as the list of Server-Sent Events the provider streams.

/** Splits text into the pieces a stream sends (each word with the whitespace after it). */
export function pieces(text) {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

function argsText(call) {
  return typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
}

function usageOf(reply) {
  return { input: 10, output: 5, cached: 0, reasoning: 0, cacheWrite: 0, ...reply.usage };
}

/** OpenAI Responses API: `{ json, events }` for one reply. */
export function openaiResponses(reply, n, model) {
  const u = usageOf(reply);
  const id = `resp_${n}`;
  const created_at = 1_764_000_000 + n;
  const output = [];
  const events = [];
  const base = { id, object: "response", created_at, model, status: "in_progress", output: [], usage: null, incomplete_details: null, error: null };
  events.push({ type: "response.created", response: base });
  if (reply.thinking !== undefined) {
    const item = { type: "reasoning", id: `rs_${n}`, summary: [{ type: "summary_text", text: reply.thinking }] };
    const index = output.length;
    events.push({ type: "response.output_item.added", output_index: index, item: { type: "reasoning", id: item.id, summary: [] } });
    events.push({
      type: "response.reasoning_summary_part.added",
      item_id: item.id,
      output_index: index,
      summary_index: 0,
      part: { type: "summary_text", text: "" },
    });
    for (const delta of pieces(reply.thinking))
      events.push({ type: "response.reasoning_summary_text.delta", item_id: item.id, output_index: index, summary_index: 0, delta });
    events.push({ type: "response.reasoning_summary_part.done", item_id: item.id, output_index: index, summary_index: 0, part: item.summary[0] });
    events.push({ type: "response.output_item.done", output_index: index, item });
    output.push(item);
  }
  for (const hosted of reply.hosted?.openai ?? []) {
    // A hosted tool's item (web_search_call…), added in progress and done as given.
    const index = output.length;
    events.push({ type: "response.output_item.added", output_index: index, item: { ...hosted, status: "in_progress" } });
    events.push({ type: "response.output_item.done", output_index: index, item: hosted });
    output.push(hosted);
  }
  if (reply.text !== undefined) {
    const item = {
      type: "message",
      id: `msg_${n}`,
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: reply.text, annotations: [] }],
    };
    const index = output.length;
    events.push({ type: "response.output_item.added", output_index: index, item: { ...item, status: "in_progress", content: [] } });
    events.push({
      type: "response.content_part.added",
      item_id: item.id,
      output_index: index,
      content_index: 0,
      part: { type: "output_text", text: "", annotations: [] },
    });
    for (const delta of pieces(reply.text))
      events.push({ type: "response.output_text.delta", item_id: item.id, output_index: index, content_index: 0, delta, logprobs: [] });
    events.push({ type: "response.output_text.done", item_id: item.id, output_index: index, content_index: 0, text: reply.text, logprobs: [] });
    events.push({ type: "response.content_part.done", item_id: item.id, output_index: index, content_index: 0, part: item.content[0] });
    events.push({ type: "response.output_item.done", output_index: index, item });
    output.push(item);
  }
  for (const [i, call] of (reply.toolCalls ?? []).entries()) {
    const args = argsText(call);
    const item = { type: "function_call", id: `fc_${n}_${i}`, call_id: call.id, name: call.name, arguments: args, status: "completed" };
    const index = output.length;
    events.push({ type: "response.output_item.added", output_index: index, item: { ...item, arguments: "", status: "in_progress" } });
    for (const delta of chunks(args)) events.push({ type: "response.function_call_arguments.delta", item_id: item.id, output_index: index, delta });
    events.push({ type: "response.function_call_arguments.done", item_id: item.id, output_index: index, arguments: args });
    events.push({ type: "response.output_item.done", output_index: index, item });
    output.push(item);
  }
  const truncated = reply.stopReason === "max_tokens";
  const json = {
    ...base,
    status: truncated ? "incomplete" : "completed",
    incomplete_details: truncated ? { reason: "max_output_tokens" } : null,
    output,
    usage: {
      input_tokens: u.input + u.cached,
      input_tokens_details: { cached_tokens: u.cached },
      output_tokens: u.output,
      output_tokens_details: { reasoning_tokens: u.reasoning },
      total_tokens: u.input + u.cached + u.output,
    },
  };
  events.push({ type: truncated ? "response.incomplete" : "response.completed", response: json });
  return { json, events: events.map((data, i) => ({ event: data.type, data: { ...data, sequence_number: i } })) };
}

/** OpenAI Chat Completions: `{ json, events }` (the events end with `[DONE]`). */
export function openaiChat(reply, n, model, includeUsage) {
  const u = usageOf(reply);
  const id = `chatcmpl_${n}`;
  const created = 1_764_000_000 + n;
  const calls = (reply.toolCalls ?? []).map((call) => ({ id: call.id, type: "function", function: { name: call.name, arguments: argsText(call) } }));
  const finish = reply.stopReason === "max_tokens" ? "length" : calls.length > 0 ? "tool_calls" : "stop";
  const usage = {
    prompt_tokens: u.input + u.cached,
    completion_tokens: u.output,
    total_tokens: u.input + u.cached + u.output,
    prompt_tokens_details: { cached_tokens: u.cached },
    completion_tokens_details: { reasoning_tokens: u.reasoning },
  };
  const message = { role: "assistant", content: reply.text ?? null, refusal: null };
  if (calls.length > 0) message.tool_calls = calls;
  const json = { id, object: "chat.completion", created, model, choices: [{ index: 0, message, finish_reason: finish, logprobs: null }], usage };
  const chunk = (delta, finish_reason = null) => ({
    data: { id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason }] },
  });
  const events = [chunk({ role: "assistant", content: "" })];
  for (const piece of pieces(reply.text ?? "")) events.push(chunk({ content: piece }));
  for (const [index, call] of calls.entries()) {
    events.push(chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }] }));
    for (const piece of chunks(call.function.arguments)) events.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
  }
  events.push(chunk({}, finish));
  if (includeUsage) events.push({ data: { id, object: "chat.completion.chunk", created, model, choices: [], usage } });
  events.push({ data: "[DONE]" });
  return { json, events };
}

/** Anthropic Messages API: `{ json, events }`. */
export function anthropicMessages(reply, n, model) {
  const u = usageOf(reply);
  const content = [];
  const events = [];
  const id = `msg_${n}`;
  const stop = reply.stopReason === "max_tokens" ? "max_tokens" : reply.toolCalls?.length ? "tool_use" : "end_turn";
  const usage = { input_tokens: u.input, output_tokens: u.output, cache_read_input_tokens: u.cached, cache_creation_input_tokens: u.cacheWrite };
  const start = { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } };
  events.push({ type: "message_start", message: start });
  const block = (startBlock, deltas, full) => {
    const index = content.length;
    events.push({ type: "content_block_start", index, content_block: startBlock });
    for (const delta of deltas) events.push({ type: "content_block_delta", index, delta });
    events.push({ type: "content_block_stop", index });
    content.push(full);
  };
  if (reply.thinking !== undefined) {
    const signature = `sig_${n}`;
    block(
      { type: "thinking", thinking: "", signature: "" },
      [...pieces(reply.thinking).map((thinking) => ({ type: "thinking_delta", thinking })), { type: "signature_delta", signature }],
      { type: "thinking", thinking: reply.thinking, signature },
    );
  }
  for (const hosted of reply.hosted?.anthropic ?? []) {
    // A server tool call streams its input as JSON deltas; a result block arrives whole.
    if (hosted.type === "server_tool_use")
      block(
        { ...hosted, input: {} },
        chunks(JSON.stringify(hosted.input)).map((partial_json) => ({ type: "input_json_delta", partial_json })),
        hosted,
      );
    else block(hosted, [], hosted);
  }
  if (reply.text !== undefined)
    block(
      { type: "text", text: "" },
      pieces(reply.text).map((text) => ({ type: "text_delta", text })),
      { type: "text", text: reply.text },
    );
  for (const call of reply.toolCalls ?? []) {
    const args = argsText(call);
    block(
      { type: "tool_use", id: call.id, name: call.name, input: {} },
      chunks(args).map((partial_json) => ({ type: "input_json_delta", partial_json })),
      { type: "tool_use", id: call.id, name: call.name, input: JSON.parse(args) },
    );
  }
  events.push({ type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: u.output } });
  events.push({ type: "message_stop" });
  const json = { ...start, content, stop_reason: stop, usage };
  return { json, events: events.map((data) => ({ event: data.type, data })) };
}

/** A provider's error body for `status`. */
export function errorBody(format, status, message) {
  if (format === "anthropic") {
    const type = status === 429 ? "rate_limit_error" : status >= 500 ? "api_error" : status === 401 ? "authentication_error" : "invalid_request_error";
    return { type: "error", error: { type, message } };
  }
  const type = status === 429 ? "rate_limit_exceeded" : status >= 500 ? "server_error" : "invalid_request_error";
  return { error: { message, type, param: null, code: type } };
}

/** Tool-call arguments as a stream sends them: in pieces of at most 8 characters. */
function chunks(text) {
  const out = [];
  for (let i = 0; i < text.length; i += 8) out.push(text.slice(i, i + 8));
  return out.length > 0 ? out : [""];
}
