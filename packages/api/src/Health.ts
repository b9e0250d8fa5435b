/** The host's health: liveness (/healthz) and readiness (/readyz), for orchestrators and load balancers. */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"

/** Why the server does not take requests (503 from /readyz). */
export class NotReady extends Schema.Class<NotReady>("NotReady")({
  status: Schema.Literal("starting", "draining")
}, HttpApiSchema.annotations({ status: 503 })) {}

export class HealthApi extends HttpApiGroup.make("health")
  .add(
    HttpApiEndpoint.get("health", "/healthz")
      .addSuccess(Schema.Struct({ status: Schema.Literal("ok") }))
      .annotate(OpenApi.Summary, "Liveness")
      .annotate(
        OpenApi.Description,
        "200 `{status: \"ok\"}` while the process is up and serving HTTP, also while its store is still starting " +
          "and while it drains. No authentication. Use it to decide whether to restart the process."
      )
  )
  .add(
    HttpApiEndpoint.get("ready", "/readyz")
      .addSuccess(Schema.Struct({ status: Schema.Literal("ready") }))
      .addError(NotReady)
      .annotate(OpenApi.Summary, "Readiness")
      .annotate(
        OpenApi.Description,
        "200 `{status: \"ready\"}` once the store is open and the API is served; 503 `{status: \"starting\"}` " +
          "before (a PostgreSQL server not reachable yet is retried with backoff), 503 `{status: \"draining\"}` " +
          "after SIGTERM or SIGINT, while the requests in flight finish. No authentication. Use it to decide " +
          "whether to send traffic."
      )
  )
  .annotate(OpenApi.Title, "Health")
  .annotate(
    OpenApi.Description,
    "Liveness and readiness of the server, for orchestrators and load balancers. No authentication."
  )
{}
