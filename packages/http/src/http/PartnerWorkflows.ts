/**
 * The partner API's workflows: the templates in the admin context (the app PartnerAdminAuth authenticated) and the
 * runs in the user context (the caller PartnerUserAuth authenticated). The core decides (Workflows); a created run
 * answers 201 and a dry run 200, and a run with readiness issues the 400 carrying them.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Workflows, type WorkflowNotReady } from "@convene/core"
import { Effect, Schema } from "effect"
import { Api } from "@convene/api/Api"
import { asPartnerFailure, CurrentPartnerCaller } from "@convene/api/PartnerUser"
import { PartnerRunNotReady, StartedWorkflowRun } from "@convene/api/PartnerWorkflows"
import { CurrentPartnerApp } from "@convene/api/Partner"
import { PartnerToolkitMissing } from "@convene/api/PartnerToolkits"

export const PartnerWorkflowTemplatesLive = HttpApiBuilder.group(Api, "partnerWorkflowTemplates", (handlers) =>
  Effect.gen(function*() {
    const workflows = yield* Workflows
    return handlers
      .handle("listWorkflowTemplates", ({ urlParams }) => Effect.flatMap(CurrentPartnerApp, (app) => workflows.listTemplates(app, urlParams)))
      .handle("getWorkflowTemplate", ({ path }) =>
        Effect.flatMap(CurrentPartnerApp, (app) => workflows.getTemplate(app, path.id)).pipe(
          Effect.mapError((refused) => new PartnerToolkitMissing({ message: refused.message }))
        ))
  }))

const encodeStarted = Schema.encode(StartedWorkflowRun)

const notReady = (error: WorkflowNotReady) =>
  new PartnerRunNotReady({ readiness_issues: error.readiness_issues, message: error.message })

export const PartnerWorkflowRunsLive = HttpApiBuilder.group(Api, "partnerWorkflowRuns", (handlers) =>
  Effect.gen(function*() {
    const workflows = yield* Workflows
    return handlers
      .handle("createWorkflowRun", ({ payload }) =>
        asPartnerFailure(Effect.gen(function*() {
          const { app, principal } = yield* CurrentPartnerCaller
          const { created, run } = yield* workflows.createRun(principal, app, payload).pipe(
            Effect.catchTag("WorkflowNotReady", (error) => Effect.fail(notReady(error)))
          )
          if (!created) return run
          return HttpServerResponse.unsafeJson(yield* Effect.orDie(encodeStarted(new StartedWorkflowRun(run))), { status: 201 })
        })))
      .handle("listWorkflowRuns", ({ urlParams }) =>
        asPartnerFailure(Effect.flatMap(CurrentPartnerCaller, ({ app, principal }) => workflows.listRuns(principal, app.id, urlParams))))
      .handle("getWorkflowRun", ({ path }) =>
        asPartnerFailure(Effect.flatMap(CurrentPartnerCaller, ({ app, principal }) => workflows.getRun(principal, app.id, path.id))))
      .handle("resolveWorkflowTask", ({ path, payload }) =>
        asPartnerFailure(Effect.flatMap(CurrentPartnerCaller, ({ app, principal }) =>
          workflows.resolveTask(principal, app.id, path.id, path.task_id, payload))))
      .handle("cancelWorkflowRun", ({ path }) =>
        asPartnerFailure(Effect.flatMap(CurrentPartnerCaller, ({ app, principal }) => workflows.cancelRun(principal, app.id, path.id))))
  }))
