/** Liveness of the host: 200 once the store is ready. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"

export class HealthApi extends HttpApiGroup.make("health")
  .add(
    HttpApiEndpoint.get("health", "/healthz")
      .addSuccess(Schema.Struct({ status: Schema.Literal("ok") }))
      .annotate(OpenApi.Description, "200 once the store is ready. No authentication.")
  )
  .annotate(OpenApi.Title, "Health")
{}
