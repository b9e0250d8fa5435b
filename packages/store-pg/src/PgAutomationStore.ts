/**
 * AutomationStore on PostgreSQL: `partner_automations`, one row per automation, and `partner_automation_actions`, its
 * actions with their position (migration 0014). A read takes the automations, then their actions in one statement.
 */
import {
  Automation,
  AutomationAction,
  AutomationActionId,
  AutomationId,
  AutomationStore,
  PartnerAppId,
  trusted,
  TriggerType
} from "@convene/core"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { type Context, DateTime, Effect, Layer, Option, Schema } from "effect"
import { DbTimestamp, orDie, page } from "./internal/sql.js"

/** A `partner_automations` row. */
const AutomationRow = Schema.Struct({
  id: AutomationId,
  partner_app_id: PartnerAppId,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  trigger_type: TriggerType,
  enabled: Schema.Boolean,
  created_at: DbTimestamp
})
type AutomationRow = typeof AutomationRow.Type

/** A `partner_automation_actions` row. */
const ActionRow = Schema.Struct({
  id: AutomationActionId,
  automation_id: AutomationId,
  position: Schema.Int,
  type: AutomationAction.fields.type,
  webhook_url: Schema.String
})

export const make: Effect.Effect<Context.Tag.Service<typeof AutomationStore>, never, SqlClient.SqlClient> = Effect.gen(
  function*() {
    const sql = yield* SqlClient.SqlClient

    const actionsOf = SqlSchema.findAll({
      Request: Schema.Array(AutomationId),
      Result: ActionRow,
      execute: (ids) =>
        sql`SELECT * FROM partner_automation_actions WHERE automation_id = ANY(${ids}::uuid[]) ORDER BY automation_id, position`
    })

    /** The automations of `rows`, in their order, each with its actions. */
    const withActions = (rows: ReadonlyArray<AutomationRow>) =>
      Effect.gen(function*() {
        if (rows.length === 0) return []
        const actions = yield* actionsOf(rows.map((row) => row.id))
        return rows.map((row) =>
          new Automation({
            ...row,
            actions: actions.filter((action) => action.automation_id === row.id).map((action) =>
              new AutomationAction({ id: action.id, type: action.type, webhook_url: action.webhook_url }, trusted)
            )
          }, trusted)
        )
      })

    const automationsWhere = SqlSchema.findAll({
      Request: Schema.Struct({ appIds: Schema.Array(PartnerAppId), trigger: TriggerType }),
      Result: AutomationRow,
      execute: ({ appIds, trigger }) =>
        sql`SELECT * FROM partner_automations
            WHERE partner_app_id = ANY(${appIds}::uuid[]) AND trigger_type = ${trigger}
            ORDER BY created_at, id`
    })

    const automationOfAction = SqlSchema.findAll({
      Request: AutomationActionId,
      Result: AutomationRow,
      execute: (actionId) =>
        sql`SELECT a.* FROM partner_automations a JOIN partner_automation_actions x ON x.automation_id = a.id
            WHERE x.id = ${actionId}`
    })

    return AutomationStore.of({
      insert: (automation) =>
        orDie(Effect.gen(function*() {
          yield* sql`INSERT INTO partner_automations ${
            sql.insert({
              id: automation.id,
              partner_app_id: automation.partner_app_id,
              name: automation.name,
              description: automation.description,
              trigger_type: automation.trigger_type,
              enabled: automation.enabled,
              created_at: DateTime.toDateUtc(automation.created_at)
            })
          }`
          yield* sql`INSERT INTO partner_automation_actions ${
            sql.insert(automation.actions.map((action, position) => ({
              id: action.id,
              automation_id: automation.id,
              position,
              type: action.type,
              webhook_url: action.webhook_url
            })))
          }`
        }).pipe(sql.withTransaction)),

      list: (appId, request) =>
        orDie(Effect.gen(function*() {
          const slice = yield* page(sql, {
            row: AutomationRow,
            columns: sql`a.*`,
            from: sql`FROM partner_automations a WHERE a.partner_app_id = ${appId}`,
            order: sql.literal("a.created_at DESC, a.id DESC"),
            page: request
          })
          return { items: yield* withActions(slice.items), total: slice.total }
        })),

      withTrigger: (appIds, trigger) =>
        appIds.length === 0
          ? Effect.succeed([])
          : orDie(Effect.flatMap(automationsWhere({ appIds, trigger }), withActions)),

      getByAction: (actionId) =>
        orDie(Effect.flatMap(automationOfAction(actionId), withActions)).pipe(
          Effect.map((found) => Option.fromNullable(found[0]))
        )
    })
  }
)

export const layer: Layer.Layer<AutomationStore, never, SqlClient.SqlClient> = Layer.effect(AutomationStore, make)
