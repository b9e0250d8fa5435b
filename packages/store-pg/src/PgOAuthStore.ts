/**
 * OAuthStore on PostgreSQL: `oauth_clients`, `authorization_codes` (keyed by the code's hash), `grants` with
 * their `grant_credentials`, and `signing_keys` (at most one not retired, by a partial unique index). Consuming a
 * code and revoking a grant are one conditional UPDATE each, so of racing callers exactly one changes the row.
 */
import { AuthorizationCode, CredentialId, Grant, GrantId, OAuthClient, OAuthStore, SigningKey } from "@convene/core"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import type * as SqlError from "@effect/sql/SqlError"
import { type Context, DateTime, Effect, Layer, Option, Schema } from "effect"
import { orDie, recordTable, rowOf, uniqueWrite } from "./internal/sql.js"

/** An `oauth_clients` row, decoded to (and encoded from) an `OAuthClient`. */
export const OAuthClientRecord = rowOf(OAuthClient, {})

/** An `authorization_codes` row, decoded to (and encoded from) an `AuthorizationCode`. */
export const AuthorizationCodeRecord = rowOf(AuthorizationCode, {})

/** A `grants` row, decoded to (and encoded from) a `Grant`. */
export const GrantRecord = rowOf(Grant, {})

/** A `signing_keys` row, decoded to (and encoded from) a `SigningKey`. */
export const SigningKeyRecord = rowOf(SigningKey, {})

const CredentialIds = Schema.Array(Schema.Struct({ credential_id: CredentialId }))

export const make: Effect.Effect<Context.Tag.Service<typeof OAuthStore>, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const date = DateTime.toDateUtc

  const clients = recordTable(sql, { table: "oauth_clients", row: OAuthClientRecord, key: ["client_id"] })
  const codes = recordTable(sql, { table: "authorization_codes", row: AuthorizationCodeRecord, key: ["code_hash"] })
  const grants = recordTable(sql, { table: "grants", row: GrantRecord, key: ["id"] })

  const insertClient = SqlSchema.void({
    Request: OAuthClientRecord,
    execute: (row) => sql`INSERT INTO oauth_clients ${sql.insert(row)}`
  })
  const insertCode = SqlSchema.void({
    Request: AuthorizationCodeRecord,
    execute: (row) => sql`INSERT INTO authorization_codes ${sql.insert(row)}`
  })
  const insertGrant = SqlSchema.void({
    Request: GrantRecord,
    execute: (row) => sql`INSERT INTO grants ${sql.insert(row)}`
  })
  const insertSigningKey = SqlSchema.void({
    Request: SigningKeyRecord,
    execute: (row) => sql`INSERT INTO signing_keys ${sql.insert(row)}`
  })
  const signingKeys = SqlSchema.findAll({
    Request: Schema.Void,
    Result: SigningKeyRecord,
    execute: () => sql`SELECT * FROM signing_keys ORDER BY created_at DESC, kid DESC`
  })
  const findGrantOf = SqlSchema.findOne({
    Request: CredentialId,
    Result: Schema.Struct({ grant_id: GrantId }),
    execute: (credentialId) => sql`SELECT grant_id FROM grant_credentials WHERE credential_id = ${credentialId}`
  })

  const credentialIds = (statement: Effect.Effect<ReadonlyArray<unknown>, SqlError.SqlError>) =>
    orDie(Effect.flatMap(statement, Schema.decodeUnknown(CredentialIds))).pipe(
      Effect.map((rows) => rows.map((row) => row.credential_id))
    )

  /** Whether a statement with `RETURNING` changed a row. */
  const changed = (statement: Effect.Effect<ReadonlyArray<unknown>, SqlError.SqlError>) =>
    Effect.map(orDie(statement), (rows) => rows.length > 0)

  return OAuthStore.of({
    insertClient: (client) => uniqueWrite(sql, insertClient(client)),
    getClient: (clientId) => clients.find({ client_id: clientId }),
    updateClient: clients.update,
    // The grants' grant-credential rows go with them (ON DELETE CASCADE).
    deleteClient: (clientId) =>
      changed(sql`
        WITH codes AS (DELETE FROM authorization_codes WHERE client_id = ${clientId}),
          client_grants AS (DELETE FROM grants WHERE client_id = ${clientId})
        DELETE FROM oauth_clients WHERE client_id = ${clientId} RETURNING client_id`),

    insertCode: (code) => uniqueWrite(sql, insertCode(code)),
    getCode: (codeHash) => codes.find({ code_hash: codeHash }),
    consumeCode: (codeHash, at) =>
      changed(sql`
        UPDATE authorization_codes SET consumed_at = ${date(at)}
        WHERE code_hash = ${codeHash} AND consumed_at IS NULL
        RETURNING code_hash`),
    purgeCodes: (before) =>
      orDie(sql`DELETE FROM authorization_codes WHERE expires_at < ${date(before)}`).pipe(Effect.asVoid),

    insertGrant: (grant) => uniqueWrite(sql, insertGrant(grant)),
    getGrant: (id) => grants.find({ id }),
    hasLiveGrant: (clientId, userId) =>
      Effect.map(
        orDie(sql`SELECT 1 FROM grants WHERE client_id = ${clientId} AND user_id = ${userId} AND revoked_at IS NULL LIMIT 1`),
        (rows) => rows.length > 0
      ),
    revokeGrant: (id, at) =>
      changed(sql`
        UPDATE grants SET revoked_at = ${date(at)}
        WHERE id = ${id} AND revoked_at IS NULL
        RETURNING id`),
    // A credential is issued under one grant: recording it again changes nothing.
    addGrantCredential: (id, credentialId) =>
      orDie(sql`
        INSERT INTO grant_credentials (grant_id, credential_id) VALUES (${id}, ${credentialId})
        ON CONFLICT (credential_id) DO NOTHING`).pipe(Effect.asVoid),
    grantCredentials: (id) =>
      credentialIds(sql`SELECT credential_id FROM grant_credentials WHERE grant_id = ${id} ORDER BY seq`),
    clientCredentials: (clientId) =>
      credentialIds(sql`
        SELECT gc.credential_id FROM grant_credentials gc JOIN grants g ON g.id = gc.grant_id
        WHERE g.client_id = ${clientId}
        ORDER BY gc.seq`),
    grantOf: (credentialId) => orDie(findGrantOf(credentialId)).pipe(Effect.map(Option.map((row) => row.grant_id))),

    signingKeys: orDie(signingKeys(undefined)),
    insertSigningKey: (key) => uniqueWrite(sql, insertSigningKey(key)),
    retireSigningKey: (kid, at) =>
      orDie(sql`UPDATE signing_keys SET retired_at = ${date(at)} WHERE kid = ${kid} AND retired_at IS NULL`).pipe(
        Effect.asVoid
      ),

    deleteByUser: (userId) =>
      orDie(sql`
        WITH codes AS (DELETE FROM authorization_codes WHERE user_id = ${userId})
        DELETE FROM grants WHERE user_id = ${userId}`).pipe(Effect.asVoid),
    deleteByWorkspace: (workspaceId) =>
      orDie(sql`
        WITH codes AS (DELETE FROM authorization_codes WHERE workspace_id = ${workspaceId})
        DELETE FROM grants WHERE workspace_id = ${workspaceId}`).pipe(Effect.asVoid)
  })
})

export const layer: Layer.Layer<OAuthStore, never, SqlClient.SqlClient> = Layer.effect(OAuthStore, make)
