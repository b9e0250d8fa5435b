/**
 * Metrics and traces, through OpenTelemetry's SDK (@effect/opentelemetry's NodeSdk over the @opentelemetry
 * packages it peers, pinned to the 2.x / 0.2xx lines that run on Node 20).
 *
 * - Metrics: every Effect `Metric` of the process (the host's in http/Metrics.ts, and any the core or a store
 *   records) in Prometheus' text format. On the main port at `GET /metrics` behind the operator token (404
 *   when the operator API is off), and, when CONVENE_METRICS_PORT is set, without a token on that port (for a
 *   scraper on a private network) at `/metrics`.
 * - Traces: when OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set (and
 *   OTEL_SDK_DISABLED is not `true`, OTEL_TRACES_EXPORTER not `none`), spans are recorded (one per request,
 *   one per core operation, one per SQL statement) and exported over OTLP/HTTP (JSON) in batches. The exporter
 *   reads the standard variables itself (OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_TIMEOUT, ...); the
 *   resource honours OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES; the batch processor OTEL_BSP_*.
 */
import { NodeSdk } from "@effect/opentelemetry"
import { PrometheusExporter, PrometheusSerializer } from "@opentelemetry/exporter-prometheus"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Config, Context, Effect, Layer, Option } from "effect"

export interface TelemetryConfig {
  /** Export traces over OTLP/HTTP (the endpoint comes from the standard variables). */
  readonly traces: boolean
  /** A port of its own for `/metrics`, without a token. */
  readonly metricsPort: Option.Option<number>
}

const isSet = (name: string) => Config.string(name).pipe(Config.map((value) => value.trim() !== ""), Config.withDefault(false))

/** OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER, CONVENE_METRICS_PORT. */
export const telemetryConfig: Config.Config<TelemetryConfig> = Config.all({
  endpoint: isSet("OTEL_EXPORTER_OTLP_ENDPOINT"),
  tracesEndpoint: isSet("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
  disabled: Config.boolean("OTEL_SDK_DISABLED").pipe(Config.withDefault(false)),
  exporter: Config.string("OTEL_TRACES_EXPORTER").pipe(Config.withDefault("otlp")),
  metricsPort: Config.port("CONVENE_METRICS_PORT").pipe(Config.option)
}).pipe(Config.map(({ disabled, endpoint, exporter, metricsPort, tracesEndpoint }) => ({
  traces: (endpoint || tracesEndpoint) && !disabled && exporter.trim().toLowerCase() !== "none",
  metricsPort
})))

export const noTelemetry: TelemetryConfig = { traces: false, metricsPort: Option.none() }

/** The metrics of the process in Prometheus' text exposition format, on demand. */
export class MetricsScrape extends Context.Tag("@convene/http/Telemetry/MetricsScrape")<MetricsScrape, {
  readonly scrape: Effect.Effect<string>
}>() {}

/**
 * The SDK for a configuration: the metric reader (always, so /metrics works), the span exporter when traces
 * are on, and the metrics port when it is set. The service name defaults to `convene`.
 */
export const layer = (
  config: TelemetryConfig,
  options: { readonly version: string; readonly host: string }
): Layer.Layer<MetricsScrape> =>
  Layer.unwrapEffect(Effect.sync(() => {
    // Made when the layer is built (its own server, if any, starts here; the SDK shuts it down with the layer).
    const exporter = new PrometheusExporter({
      preventServerStart: Option.isNone(config.metricsPort),
      ...(Option.isSome(config.metricsPort) ? { port: config.metricsPort.value, host: options.host } : {}),
      endpoint: "/metrics"
    })
    const serializer = new PrometheusSerializer()
    const sdk = NodeSdk.layer(() => ({
      resource: { serviceName: process.env.OTEL_SERVICE_NAME ?? "convene", serviceVersion: options.version },
      metricReader: exporter,
      ...(config.traces ? { spanProcessor: new BatchSpanProcessor(new OTLPTraceExporter()) } : {})
    }))
    const scrape = MetricsScrape.of({
      scrape: Effect.promise(() => exporter.collect()).pipe(
        Effect.map(({ resourceMetrics }) => serializer.serialize(resourceMetrics))
      )
    })
    return Layer.merge(Layer.discard(sdk), Layer.succeed(MetricsScrape, scrape))
  }))
