import type { Command } from "commander";
import { jsonOption, print, printJson, storeOption, withEngine, type JsonOptions, type StoreOptions } from "../context.js";
import { table } from "../format.js";

/** Registers `cairn queues`. */
export function registerQueuesCommand(program: Command): void {
  const queues = program
    .command("queues")
    .description("flow control: runs running, waiting for a slot and suspended, per queue and concurrency key")
    .option("--keys", "one line per concurrency key instead of per queue");
  storeOption(jsonOption(queues)).action(listQueues);
}

async function listQueues(options: StoreOptions & JsonOptions & { keys?: boolean }): Promise<void> {
  await withEngine(options, [], async (engine) => {
    const states = await engine.listQueues();
    if (options.json) return printJson(states);
    if (states.length === 0) return print("No queued runs. Queues are declared with createEngine({ queues }); see docs/operations/flow-control.md.");
    if (options.keys) {
      const rows = states.flatMap((s) => s.keys);
      return print(
        ...table(rows, [
          { header: "queue", cell: (r) => r.queue },
          { header: "key", cell: (r) => r.concurrencyKey ?? "(none)" },
          { header: "running", cell: (r) => String(r.running) },
          { header: "waiting", cell: (r) => String(r.waiting) },
          { header: "suspended", cell: (r) => String(r.suspended) },
        ]),
      );
    }
    print(
      ...table(states, [
        { header: "queue", cell: (s) => s.name },
        { header: "running", cell: (s) => String(s.running) },
        { header: "waiting", cell: (s) => String(s.waiting) },
        { header: "suspended", cell: (s) => String(s.suspended) },
        { header: "keys", cell: (s) => String(s.keys.filter((k) => k.concurrencyKey !== null).length) },
      ]),
    );
  });
}
