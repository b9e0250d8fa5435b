/**
 * The toolkit manifest, version 1 (decisions.md "Toolkit manifest, version 1"): what a partner app's toolkit brings to
 * the workspaces it is installed in (next steps, action buttons, meeting templates, workflow templates).
 *
 * Decisions where the documents are silent (repeated in the API's description and the README):
 * - Keys are 1 to 100 characters of letters, digits, `_`, `-` and `.`, starting with a letter or a digit, unique
 *   within their list (`next_steps[2].key: duplicate key "x"`).
 * - `name` 1 to 200 characters, a `title`, `label` or template `name` 1 to 200, a `description` at most 2000; text is
 *   trimmed where it is a name, title or label. At most 50 entries in each list, 50 agenda items per meeting template,
 *   20 roles and 50 steps per workflow template.
 * - A URL (action button, webhook step) is an absolute `https:` URL without user information, at most 2000
 *   characters. An action button's URL is opened by the user's browser, so no outbound rule applies to it; a webhook
 *   step's URL meets the outbound rules when a run calls it.
 * - A workflow template lists 1 to 20 roles (each a key, unique) and 1 to 50 steps; a step's `role`, when given,
 *   names one of them. A `webhook` step has a `url`, and only a webhook step has one.
 * - `restricted_to_leads` is accepted at any depth and dropped (partner-api.md); every other unknown field is refused.
 * - A manifest that breaks a rule is refused naming the path of its first problem from the manifest's root
 *   (`manifest.` is prepended by the routes that take it in a body).
 */
import { Either, ParseResult, Schema } from "effect"
import { AgendaItemType } from "../../shared/AgendaItemType.js"
import { LongText, Title } from "../../shared/Text.js"
import { httpsUrlProblem } from "../../shared/Url.js"

/** The most entries of each list of a manifest. */
export const MAX_MANIFEST_ENTRIES = 50
/** The most agenda items of a meeting template. */
export const MAX_TEMPLATE_AGENDA = 50
/** The most roles of a workflow template. */
export const MAX_WORKFLOW_ROLES = 20
/** The most steps of a workflow template. */
export const MAX_WORKFLOW_STEPS = 50

export const ManifestKey = Title(100).pipe(
  Schema.pattern(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, {
    message: () => "must be letters, digits, '_', '-' or '.', starting with a letter or a digit"
  })
).annotations({ description: "1 to 100 letters, digits, '_', '-' or '.'; unique within its list" })

const HttpsUrl = Title(2000).pipe(
  Schema.filter((text) => httpsUrlProblem(text) ?? true)
).annotations({
  description: "an absolute HTTPS URL without user information",
  // Generated values (property tests) are URLs of this form: random text almost never is one.
  arbitrary: () => (fc) =>
    fc.tuple(fc.constantFrom("crm", "hooks", "app"), fc.constantFrom("example.com", "example.org"), fc.nat(999)).map(
      ([host, domain, n]) => `https://${host}.${domain}/x/${n}`
    )
})

/** A list of at most `max` entries (`what`), each with a `key` no other entry of the list has. */
const keyedList = <A extends { readonly key: string }, I, R>(item: Schema.Schema<A, I, R>, what: string, max: number) =>
  Schema.Array(item).pipe(
    Schema.maxItems(max, { message: () => `may list at most ${max} ${what}` }),
    Schema.filter((entries) => {
      const seen = new Set<string>()
      for (const [index, entry] of entries.entries()) {
        if (seen.has(entry.key)) return { path: [index, "key"], message: `duplicate key "${entry.key}"` }
        seen.add(entry.key)
      }
      return true
    })
  )

export class ManifestNextStep extends Schema.Class<ManifestNextStep>("ManifestNextStep")({
  key: ManifestKey,
  title: Title(200),
  description: Schema.optional(LongText(2000))
}) {}

export class ManifestActionButton extends Schema.Class<ManifestActionButton>("ManifestActionButton")({
  key: ManifestKey,
  label: Title(200),
  url: HttpsUrl
}) {}

export class ManifestAgendaItem extends Schema.Class<ManifestAgendaItem>("ManifestAgendaItem")({
  title: Title(200),
  // The literals without the shared identifier, so that a refusal lists them.
  item_type: Schema.optional(Schema.Literal(...AgendaItemType.literals))
}) {}

export class ManifestMeetingTemplate extends Schema.Class<ManifestMeetingTemplate>("ManifestMeetingTemplate")({
  key: ManifestKey,
  name: Title(200),
  agenda: Schema.Array(ManifestAgendaItem).pipe(
    Schema.maxItems(MAX_TEMPLATE_AGENDA, { message: () => `may list at most ${MAX_TEMPLATE_AGENDA} agenda items` })
  )
}) {}

export const WorkflowStepType = Schema.Literal("task", "approval", "webhook")
export type WorkflowStepType = typeof WorkflowStepType.Type

export class ManifestWorkflowStep extends Schema.Class<ManifestWorkflowStep>("ManifestWorkflowStep")({
  key: ManifestKey,
  type: WorkflowStepType,
  title: Title(200),
  role: Schema.optional(ManifestKey),
  url: Schema.optional(HttpsUrl)
}) {}

const WorkflowRoles = Schema.Array(ManifestKey).pipe(
  Schema.minItems(1, { message: () => "must list at least one role" }),
  Schema.maxItems(MAX_WORKFLOW_ROLES, { message: () => `may list at most ${MAX_WORKFLOW_ROLES} roles` }),
  Schema.filter((roles) => {
    const index = roles.findIndex((role, at) => roles.indexOf(role) !== at)
    return index === -1 || { path: [index], message: `duplicate role "${roles[index]}"` }
  })
)

export class ManifestWorkflowTemplate extends Schema.Class<ManifestWorkflowTemplate>("ManifestWorkflowTemplate")(
  Schema.Struct({
    key: ManifestKey,
    name: Title(200),
    description: Schema.optional(LongText(2000)),
    roles: WorkflowRoles,
    steps: keyedList(ManifestWorkflowStep, "steps", MAX_WORKFLOW_STEPS).pipe(
      Schema.minItems(1, { message: () => "must list at least one step" })
    )
  }).pipe(Schema.filter((template) => {
    for (const [index, step] of template.steps.entries()) {
      if (step.role !== undefined && !template.roles.includes(step.role)) {
        return { path: ["steps", index, "role"], message: `"${step.role}" is not one of the template's roles` }
      }
      if (step.type === "webhook" && step.url === undefined) return { path: ["steps", index, "url"], message: "is required for a webhook step" }
      if (step.type !== "webhook" && step.url !== undefined) return { path: ["steps", index, "url"], message: "is only for a webhook step" }
    }
    return true
  }, {
    // Generated templates (property tests) are consistent ones: random steps almost never name declared roles.
    arbitrary: () => (fc) =>
      fc.tuple(fc.constantFrom("Review", "Onboarding"), fc.boolean()).map(([name, withWebhook]) => ({
        key: name.toLowerCase(),
        name,
        roles: ["lead", "reviewer"],
        steps: [
          new ManifestWorkflowStep({ key: "prepare", type: "task", title: "Prepare", role: "lead" }),
          new ManifestWorkflowStep({ key: "approve", type: "approval", title: "Approve", role: "reviewer" }),
          ...(withWebhook ? [new ManifestWorkflowStep({ key: "notify", type: "webhook", title: "Notify", url: "https://hooks.example.com/run" })] : [])
        ]
      }))
  }))
) {}

/** A manifest, version 1, as stored and exported (without any `restricted_to_leads`). */
export class Manifest extends Schema.Class<Manifest>("ToolkitManifest")({
  schema_version: Schema.Literal(1).annotations({ message: () => "must be 1" }),
  name: Title(200),
  description: Schema.optional(LongText(2000)),
  next_steps: Schema.optional(keyedList(ManifestNextStep, "next steps", MAX_MANIFEST_ENTRIES)),
  action_buttons: Schema.optional(keyedList(ManifestActionButton, "action buttons", MAX_MANIFEST_ENTRIES)),
  meeting_templates: Schema.optional(keyedList(ManifestMeetingTemplate, "meeting templates", MAX_MANIFEST_ENTRIES)),
  workflow_templates: Schema.optional(keyedList(ManifestWorkflowTemplate, "workflow templates", MAX_MANIFEST_ENTRIES))
}) {}

/** The field partner-api.md says is accepted and ignored anywhere in a manifest. */
const ignoredField = "restricted_to_leads"

/** The JSON value without `restricted_to_leads` at any depth. */
const withoutIgnored = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(withoutIgnored)
  if (typeof value !== "object" || value === null) return value
  return Object.fromEntries(
    Object.entries(value).filter(([key]) => key !== ignoredField).map(([key, inner]) => [key, withoutIgnored(inner)])
  )
}

/** `next_steps[2].key` for the path ["next_steps", 2, "key"]; the root is empty. */
const pathOf = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>((text, key) => (typeof key === "number" ? `${text}[${key}]` : text === "" ? String(key) : `${text}.${String(key)}`), "")

const expected = /^Expected (.+?), actual [\s\S]*$/
const literal = /^Expected ("[^"]*"|-?\d+|true|false), actual [\s\S]*$/

/** What a schema's own message says, in the API's words (never the value sent, never a type's syntax). */
const wordsOf = (issue: ParseResult.ArrayFormatterIssue): string => {
  if (issue._tag === "Missing") return "is required"
  if (issue._tag === "Unexpected") return "is not a field of a toolkit manifest"
  const match = expected.exec(issue.message)
  if (match === null) return issue.message
  const type = match[1] ?? ""
  if (type === "string") return "must be a string"
  if (type.startsWith("ReadonlyArray<")) return "must be an array"
  return "must be a JSON object"
}

const decode = Schema.decodeUnknownEither(Manifest, { errors: "first", onExcessProperty: "error" })

/**
 * The manifest in `input` (a JSON value), or the first problem as `path: problem` (`next_steps[2].key: duplicate key
 * "x"`), `prefix` before the path (`manifest` for a body's field; the root itself is named by the prefix alone).
 */
export const decodeManifest = (input: unknown, prefix = "manifest"): Either.Either<Manifest, string> =>
  Either.mapLeft(decode(withoutIgnored(input)), (error) => {
    const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
    const issue = issues[0]
    if (issue === undefined) return `${prefix}: is not a valid toolkit manifest`
    const path = pathOf(issue.path)
    const where = path === "" ? prefix : prefix === "" ? path : path.startsWith("[") ? `${prefix}${path}` : `${prefix}.${path}`
    // A set of literals is reported as one issue per literal, at the same path.
    const allowed = issues
      .filter((other) => pathOf(other.path) === path && !other.message.startsWith("Expected undefined,"))
      .map((other) => literal.exec(other.message)?.[1])
    if (allowed.length > 1 && allowed.every((value) => value !== undefined)) {
      return `${where}: must be one of ${allowed.map((value) => value.replaceAll("\"", "")).join(", ")}`
    }
    return `${where}: ${wordsOf(issue)}`
  })

/** The manifest's keys of one kind, as the conflicts of decisions.md compare them. */
export const manifestKeys = (manifest: Manifest): ReadonlyArray<string> => [
  ...(manifest.next_steps ?? []).map((entry) => `next_steps.${entry.key}`),
  ...(manifest.action_buttons ?? []).map((entry) => `action_buttons.${entry.key}`),
  ...(manifest.meeting_templates ?? []).map((entry) => `meeting_templates.${entry.key}`),
  ...(manifest.workflow_templates ?? []).map((entry) => `workflow_templates.${entry.key}`)
]

/** The manifest as JSON text (how the stores keep it) and back (a stored manifest decoded again, trusted). */
export const manifestToJson = Schema.encodeSync(Schema.parseJson(Manifest))
export const manifestFromJson = Schema.decodeUnknownSync(Schema.parseJson(Manifest))
