// Progress on stderr: one line per case, rewritten in place while it runs (on a terminal),
// then left with its result. Off a terminal only the finished lines are written.

const tty = Boolean(process.stderr.isTTY);
const CLEAR = "\r\x1b[2K";

export class Progress {
  constructor(total) {
    this.total = total;
    this.index = 0;
    this.label = "";
    this.text = "";
    this.startedAt = 0;
    // On a terminal, the elapsed time keeps ticking while a repetition runs.
    this.ticker = tty ? setInterval(() => this.render(), 250).unref() : null;
  }

  /** A new case begins. */
  begin(label) {
    this.index += 1;
    this.label = label;
    this.startedAt = performance.now();
    this.update("starting");
  }

  /** What the running case is doing now. */
  update(text) {
    this.text = text;
    this.render();
  }

  render() {
    if (tty && this.label) process.stderr.write(`${CLEAR}${this.prefix()} ${this.text} ${this.elapsed()}`);
  }

  /** The case finished; its line stays. */
  end(text, mark = "✓") {
    const label = this.label;
    this.label = "";
    process.stderr.write(`${tty ? CLEAR : ""}${mark} ${this.prefix(label)} ${text} ${this.elapsed()}\n`);
  }

  prefix(label = this.label) {
    return `[${String(this.index).padStart(String(this.total).length)}/${this.total}] ${label.padEnd(34)}`;
  }

  elapsed() {
    return `(${((performance.now() - this.startedAt) / 1000).toFixed(1)}s)`;
  }
}
