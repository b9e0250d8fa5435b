import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect, Option } from "effect"
import { Api } from "@convene/api/Api"
import { NotReady } from "@convene/api/Health"
import { Lifecycle } from "../Lifecycle.js"

/**
 * Liveness always; readiness from the server's phase. (While the store is starting the API is not served yet,
 * and the gate answers both itself; an API served without the gate, say in-process, is always ready.)
 */
export const HealthLive = HttpApiBuilder.group(Api, "health", (handlers) =>
  handlers
    .handle("health", () => Effect.succeed({ status: "ok" as const }))
    .handle("ready", () =>
      Effect.flatMap(Effect.serviceOption(Lifecycle), (lifecycle) => {
        const phase = Option.match(lifecycle, { onNone: () => "ready" as const, onSome: ({ phase }) => phase() })
        return phase === "ready" ? Effect.succeed({ status: "ready" as const }) : Effect.fail(new NotReady({ status: phase }))
      })))
