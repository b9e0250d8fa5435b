/**
 * A clock for a server a test runs in this process: the live clock moved on by `offset` milliseconds, so that minutes
 * or days pass at once (a retry made due, a window expired) while the server's loops still sleep in real time.
 */
import { Clock, type Duration, Effect } from "effect"

export class MovableClock implements Clock.Clock {
  readonly [Clock.ClockTypeId]: Clock.ClockTypeId = Clock.ClockTypeId
  private readonly live = Clock.make()
  offset = 0
  unsafeCurrentTimeMillis(): number {
    return this.live.unsafeCurrentTimeMillis() + this.offset
  }
  unsafeCurrentTimeNanos(): bigint {
    return this.live.unsafeCurrentTimeNanos() + BigInt(this.offset) * 1_000_000n
  }
  readonly currentTimeMillis = Effect.sync(() => this.unsafeCurrentTimeMillis())
  readonly currentTimeNanos = Effect.sync(() => this.unsafeCurrentTimeNanos())
  sleep(duration: Duration.Duration): Effect.Effect<void> {
    return this.live.sleep(duration)
  }
}
