/**
 * The host's metrics, as Effect `Metric`s (exported in Prometheus' text format by Telemetry.ts): requests by
 * method, route template and status, with their durations; Idempotency-Key outcomes. Labels are bounded: a
 * route is a template of the contract (or `unmatched`), never a raw path.
 */
import { Metric, MetricBoundaries, MetricLabel } from "effect"

const requests = Metric.counter("convene_http_requests", {
  description: "HTTP requests answered, by method, route template and status",
  incremental: true
})

const durations = Metric.histogram(
  "convene_http_request_duration_seconds",
  MetricBoundaries.fromIterable([0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]),
  "Time from a request's arrival to its answer, in seconds, by method, route template and status"
)

const inFlight = Metric.gauge("convene_http_requests_in_flight", {
  description: "HTTP requests this process has received and not yet answered"
})

/** A request arrived (+1) or was answered (-1). */
export const recordInFlight = (change: 1 | -1) => inFlight.unsafeModify(change, [])

const idempotency = Metric.counter("convene_idempotency_requests", {
  description: "Requests with an Idempotency-Key on endpoints that honour it, by outcome",
  incremental: true
})

/** Tagged metrics, made once per label set (tagging per request would hash the labels every time). */
const perRoute = new Map<string, { readonly requests: typeof requests; readonly durations: typeof durations }>()

/** Counts a request and records its duration. */
export const recordRequest = (method: string, route: string | undefined, status: number, seconds: number) => {
  const key = `${method} ${route ?? "unmatched"} ${status}`
  let metrics = perRoute.get(key)
  if (metrics === undefined) {
    const labels = [
      MetricLabel.make("method", method),
      MetricLabel.make("route", route ?? "unmatched"),
      MetricLabel.make("status", String(status))
    ]
    metrics = {
      requests: Metric.taggedWithLabels(requests, labels),
      durations: Metric.taggedWithLabels(durations, labels)
    }
    perRoute.set(key, metrics)
  }
  metrics.requests.unsafeUpdate(1, [])
  metrics.durations.unsafeUpdate(seconds, [])
}

export type IdempotencyOutcome = "stored" | "replayed" | "in_flight" | "key_reused" | "key_invalid" | "not_stored"

const perOutcome = new Map<IdempotencyOutcome, typeof idempotency>()

/** Counts an Idempotency-Key outcome: a new answer stored, a replay, or a refusal. */
export const recordIdempotency = (outcome: IdempotencyOutcome) => {
  let metric = perOutcome.get(outcome)
  if (metric === undefined) {
    metric = Metric.tagged(idempotency, "outcome", outcome)
    perOutcome.set(outcome, metric)
  }
  metric.unsafeUpdate(1, [])
}
