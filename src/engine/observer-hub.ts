import { serializeError } from "../core/serialize.js";
import type { EngineLogger } from "./engine.js";
import type { EngineEvent, EngineObserver, StepAttempt } from "./observer.js";

/**
 * The engine's observers (`engine.observe`, `createEngine({ observer })`): hands each engine event to
 * every one of them, and composes their `aroundStep` wrappers. An observer that throws is logged and
 * skipped; it never fails the run.
 */
export class ObserverHub {
  private readonly observers = new Set<EngineObserver>();
  /** The observers' `aroundStep` wrappers composed (outermost first); undefined while none has one. */
  private around: (<T>(step: StepAttempt, run: () => T) => T) | undefined;

  constructor(
    private readonly logger: EngineLogger,
    initial?: EngineObserver,
  ) {
    if (initial) this.observers.add(initial);
    this.refresh();
  }

  /** True while anyone observes (so callers can skip building events nobody reads). */
  get active(): boolean {
    return this.observers.size > 0;
  }

  /** Hands an event to every observer. Bound once, so workers can keep it. */
  readonly report = (event: EngineEvent): void => {
    for (const observer of this.observers) {
      try {
        observer(event);
      } catch (error) {
        this.logger.log("warn", "an engine observer threw; the event is dropped for it", { type: event.type, error: serializeError(error) });
      }
    }
  };

  /** The composed `aroundStep` wrappers; undefined while none has one (steps then run bare). */
  aroundStep(): (<T>(step: StepAttempt, run: () => T) => T) | undefined {
    return this.around;
  }

  /** Adds an observer; returns the function that removes it. */
  add(observer: EngineObserver): () => void {
    // A wrapper per call, so adding the same function twice gives two independent subscriptions.
    const entry: EngineObserver = (event) => observer(event);
    if (observer.aroundStep) entry.aroundStep = observer.aroundStep;
    this.observers.add(entry);
    this.refresh();
    return () => {
      this.observers.delete(entry);
      this.refresh();
    };
  }

  private refresh(): void {
    const wrappers = [...this.observers].flatMap((observer) => (observer.aroundStep ? [observer.aroundStep] : []));
    this.around =
      wrappers.length === 0
        ? undefined
        : <T>(step: StepAttempt, run: () => T): T => wrappers.reduceRight<() => T>((inner, wrap) => () => this.wrapSafely(wrap, step, inner), run)();
  }

  /** A wrapper that throws before running the step is logged and skipped: the step still runs, once. */
  private wrapSafely<T>(wrap: NonNullable<EngineObserver["aroundStep"]>, step: StepAttempt, run: () => T): T {
    let ran = false;
    try {
      return wrap(step, () => {
        ran = true;
        return run();
      });
    } catch (error) {
      if (ran) throw error;
      this.logger.log("warn", "an engine observer's aroundStep threw; the step runs without it", { opKey: step.opKey, error: serializeError(error) });
      return run();
    }
  }
}
