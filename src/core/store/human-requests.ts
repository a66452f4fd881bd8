import type { HumanAnswer } from "../journal.js";

/** Human requests: questions for people, durable until answered. Part of the {@link Store} port. */
export interface HumanRequestStore {
  getHumanRequest(requestId: string): Promise<HumanRequest | undefined>;
  /** Requests matching `query`, in (createdAt, requestId) order (`query.order`, default oldest first). */
  listHumanRequests(query: ListHumanRequestsQuery): Promise<HumanRequest[]>;
  /**
   * Records an answer for a pending request and delivers it to the run's inbox as
   * event type `human:<requestId>` (eventId = requestId), waking the run.
   * Throws HumanRequestNotFoundError, or HumanRequestAnsweredError if it already has an answer.
   */
  answerHuman(requestId: string, answer: HumanAnswer, now: number): Promise<void>;
}

/** Where a human request stands. */
export type HumanRequestStatus = "pending" | "answered" | "closed";
/** A question for a person, durable until answered. */
export interface HumanRequest {
  requestId: string;
  runId: string;
  opKey: string;
  question: string;
  options: string[];
  /**
   * `pending` until answered (or escalated on timeout: `answered`, by "timeout"); `closed` when its
   * run reached a final status first (set in the same transaction as the run's final entry).
   */
  status: HumanRequestStatus;
  /** Encoded {@link HumanAnswer}. */
  answer: string | null;
  timeoutAt: number | null;
  createdAt: number;
  /** When it was answered, or closed. */
  answeredAt: number | null;
  /** With status `closed`: the final status of the run (`cancelled`, `failed`, `completed`, …). */
  closedReason?: string;
  /** Encoded context the question was asked with (`ctx.askHuman({ context })`); absent without one. */
  context?: string;
  /** Set by views (never stored) when a payload of this request cannot be decoded: why (docs/errors/PAYLOAD_UNREADABLE.md). */
  unreadable?: string;
}
/** Filters of {@link Store.listHumanRequests}. */
export interface ListHumanRequestsQuery {
  status?: HumanRequestStatus;
  runId?: string;
  /**
   * Only requests of runs whose id starts with this text (plain characters, no wildcards). A
   * namespaced API token lists with `runIdPrefix: "<namespace>/"`, so a page is never short.
   */
  runIdPrefix?: string;
  /** Default and at most 1000. */
  limit?: number;
  /** `asc` (default): oldest first; `desc`: newest first. Ties are broken by requestId. */
  order?: "asc" | "desc";
  /** Keyset paging: only requests after this one in `order` (the last of the previous page). */
  after?: { createdAt: number; requestId: string };
}
