/**
 * Toolkits' rules on the memory store: the manifest v1 schema with the path of its first problem, and (below) the
 * toolkits, versions, conflicts, publish and installations of core's Toolkits.
 */
import { decodeManifest, Manifest } from "@convene/core"
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"

const base = { schema_version: 1, name: "Sales kit" }

const problemOf = (input: unknown) => Either.match(decodeManifest(input), { onLeft: (problem) => problem, onRight: () => "ok" })

describe("Manifest v1", () => {
  it("decodes every list, drops restricted_to_leads at any depth and keeps the rest as given", () => {
    const decoded = decodeManifest({
      ...base,
      restricted_to_leads: true,
      description: "For sales",
      next_steps: [{ key: "follow-up", title: " Follow up ", restricted_to_leads: false }],
      action_buttons: [{ key: "crm", label: "Open CRM", url: "https://crm.example.com/x?y=1" }],
      meeting_templates: [{ key: "kickoff", name: "Kickoff", agenda: [{ title: "Intro", item_type: "BREAK", restricted_to_leads: 1 }, { title: "Plan" }] }],
      workflow_templates: [{
        key: "deal",
        name: "Deal review",
        roles: ["owner", "approver"],
        steps: [
          { key: "draft", type: "task", title: "Draft", role: "owner" },
          { key: "approve", type: "approval", title: "Approve", role: "approver" },
          { key: "notify", type: "webhook", title: "Notify", url: "https://hooks.example.com/deal" }
        ]
      }]
    })
    expect(Either.isRight(decoded)).toBe(true)
    const manifest = Either.getOrThrow(decoded)
    expect(manifest).toBeInstanceOf(Manifest)
    expect(JSON.stringify(manifest)).not.toContain("restricted_to_leads")
    expect(manifest.next_steps?.[0]?.title).toBe("Follow up")
    expect(manifest.meeting_templates?.[0]?.agenda[0]?.item_type).toBe("BREAK")
  })

  it.each([
    [{}, "manifest.schema_version: is required"],
    ["text", "manifest: must be a JSON object"],
    [{ ...base, schema_version: 2 }, "manifest.schema_version: must be 1"],
    [{ ...base, name: 3 }, "manifest.name: must be a string"],
    [{ ...base, name: "  " }, "manifest.name: must not be empty"],
    [{ ...base, colour: "red" }, "manifest.colour: is not a field of a toolkit manifest"],
    [{ ...base, next_steps: {} }, "manifest.next_steps: must be an array"],
    [
      { ...base, next_steps: [{ key: "x", title: "A" }, { key: "y", title: "B" }, { key: "x", title: "C" }] },
      "manifest.next_steps[2].key: duplicate key \"x\""
    ],
    [{ ...base, next_steps: [{ key: "bad key", title: "A" }] }, "manifest.next_steps[0].key: must be letters, digits, '_', '-' or '.', starting with a letter or a digit"],
    [{ ...base, next_steps: [{ key: "a", title: "A", extra: 1 }] }, "manifest.next_steps[0].extra: is not a field of a toolkit manifest"],
    [{ ...base, action_buttons: [{ key: "a", label: "A", url: "http://crm.example.com" }] }, "manifest.action_buttons[0].url: must be an HTTPS URL (https://...)"],
    [{ ...base, action_buttons: [{ key: "a", label: "A", url: "crm" }] }, "manifest.action_buttons[0].url: must be an absolute HTTPS URL"],
    [{ ...base, action_buttons: [{ key: "a", label: "A", url: "https://u:p@crm.example.com" }] }, "manifest.action_buttons[0].url: must not carry a user name or password"],
    [
      { ...base, meeting_templates: [{ key: "k", name: "K", agenda: [{ title: "t", item_type: "DECISION" }] }] },
      "manifest.meeting_templates[0].agenda[0].item_type: must be one of DISCUSSION, QUESTIONS_TO_ANSWER, BREAK, ADJOURN"
    ],
    [
      { ...base, workflow_templates: [{ key: "w", name: "W", roles: ["r"], steps: [{ key: "s", type: "task", title: "S", role: "q" }] }] },
      "manifest.workflow_templates[0].steps[0].role: \"q\" is not one of the template's roles"
    ],
    [
      { ...base, workflow_templates: [{ key: "w", name: "W", roles: ["r"], steps: [{ key: "s", type: "webhook", title: "S" }] }] },
      "manifest.workflow_templates[0].steps[0].url: is required for a webhook step"
    ],
    [
      { ...base, workflow_templates: [{ key: "w", name: "W", roles: ["r"], steps: [{ key: "s", type: "run", title: "S" }] }] },
      "manifest.workflow_templates[0].steps[0].type: must be one of task, approval, webhook"
    ],
    [
      { ...base, workflow_templates: [{ key: "w", name: "W", roles: ["r", "r"], steps: [{ key: "s", type: "task", title: "S" }] }] },
      "manifest.workflow_templates[0].roles[1]: duplicate role \"r\""
    ],
    [
      { ...base, next_steps: Array.from({ length: 51 }, (_, i) => ({ key: `k${i}`, title: "T" })) },
      "manifest.next_steps: may list at most 50 next steps"
    ]
  ])("refuses %j naming the first problem", (input, problem) => {
    expect(problemOf(input)).toBe(problem)
  })
})
