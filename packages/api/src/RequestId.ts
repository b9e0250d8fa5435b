import { FiberRef } from "effect"

/** The id of the request being served: sent back as X-Request-Id and in every error body. */
export const CurrentRequestId: FiberRef.FiberRef<string> = FiberRef.unsafeMake("")
