const dist = process.argv[2];
const queuedToo = process.argv[3] === "queued";
const { SqliteStore } = await import(`${dist}/src/store/sqlite/sqlite-store.js`);
const { encode } = await import(`${dist}/src/core/serialize.js`);
const file = `/tmp/claimbench-${process.pid}-${Date.now()}.db`;
const store = new SqliteStore(file); await store.migrate();
const N = 4000;
const runs = Array.from({ length: N }, (_, i) => ({ runId: `r${i}`, workflow: "wf", version: "1", input: encode({ i }) }));
const queued = queuedToo ? Array.from({ length: N }, (_, i) => ({ runId: `q${i}`, workflow: "wf", version: "1", input: encode({ i }), flow: { queue: "q", concurrencyKey: null, priority: 0 } })) : [];
const now = Date.now();
await store.createRuns(queued, now - 10);
await store.createRuns(runs, now);
const req = { workerId: "w", now: now + 1, leaseMs: 60000, limit: 16, workflows: [{ name: "wf", version: "1" }] };
let claimed = 0, calls = 0;
const t0 = performance.now();
while (claimed < N) { const got = await store.claimRuns(req); claimed += got.length; calls++; }
const t1 = performance.now();
// idle polls (nothing unqueued to claim)
const t2 = performance.now();
for (let i = 0; i < 2000; i++) await store.claimRuns(req);
const t3 = performance.now();
console.log(`${dist.includes("main") ? "main" : "flow"}${queuedToo ? "+4000 queued waiting" : ""}: ${((t1 - t0) / calls).toFixed(3)} ms/claim of 16 (${calls} claims), idle poll ${(((t3 - t2) / 2000) * 1000).toFixed(1)} µs`);
await store.close();
