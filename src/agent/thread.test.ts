import { describe, expect, it } from "vitest";
import { sharedEngines, STORE_KINDS } from "../../test/support/engines.js";
import { waitFor } from "../testing/wait-for.js";
import { defineAgent } from "./agent.js";
import { textOf } from "./model/messages.js";
import type { Model } from "./model/model.js";
import { ScriptedModel } from "./model/scripted.js";
import { defineThread, sendToThread, type ThreadState } from "./thread.js";

const fast = { pollInterval: 10 };

describe.each(STORE_KINDS)("threads on %s", (kind) => {
  it("keeps a conversation across turns, restarts and duplicate sends", async () => {
    let calls = 0;
    // Answers with what it has heard so far: the user messages of the whole conversation.
    const model: Model = {
      provider: "scripted",
      modelId: "scripted",
      async generate(request) {
        calls += 1;
        const heard = request.messages.filter((m) => m.role === "user").map((m) => textOf(m.content as never));
        return new ScriptedModel([{ content: `heard: ${heard.join(", ")}` }], { cursor: "calls" }).generate(request);
      },
    };
    const agent = defineAgent({ name: "chat", model });
    const thread = defineThread(agent);
    const [one, two] = await sharedEngines(kind, [agent, thread], [agent, thread]);
    const worker = one!.startWorker(fast);
    const first = await sendToThread(one!, thread, "t1", "hello", { turnId: "1" });
    expect(first.runId).toBe("t1:1");
    expect((await first.result()).text).toBe("heard: hello");
    const again = await sendToThread(one!, thread, "t1", "hello", { turnId: "1" });
    expect((await again.result()).text).toBe("heard: hello");
    // The thread sleeps between messages; another worker picks the conversation up.
    await waitFor(async () => (await one!.getRun("t1")).status === "suspended");
    await worker.stop();
    two!.startWorker(fast);
    expect((await (await sendToThread(two!, thread, "t1", "how are you", { turnId: "2" })).result()).text).toBe("heard: hello, how are you");
    expect((await (await sendToThread(two!, thread, "t1", "bye", { turnId: "3" })).result()).text).toBe("heard: hello, how are you, bye");
    expect(calls).toBe(3);
    await two!.sendEvent("t1", "message", { close: true });
    const state = (await two!.result("t1", { timeoutMs: 5000 })) as ThreadState;
    expect(state.turns).toBe(3);
    expect(state.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user", "assistant"]);
  });
});
