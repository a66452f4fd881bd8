/** The operator's pages, each at `/ui/<view>`, in the order of their tabs. */
export const CONSOLE_VIEWS = [
  { view: "schedules", label: "Schedules" },
  { view: "queues", label: "Queues" },
  { view: "outbox", label: "Outbox" },
  { view: "versions", label: "Versions" },
  { view: "audit", label: "Audit log" },
  { view: "tokens", label: "Tokens" },
] as const;

/** One of the operator's pages. */
export type ConsoleView = (typeof CONSOLE_VIEWS)[number]["view"];

/** True when `name` is one of the operator's pages. */
export function isConsoleView(name: string | undefined): name is ConsoleView {
  return CONSOLE_VIEWS.some((entry) => entry.view === name);
}
