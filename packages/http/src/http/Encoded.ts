/**
 * An endpoint's success as the platform would answer it, encoded without checking the value again (the core made it,
 * and checked it then: core/shared/Encode.ts). The platform encodes every answer with `Schema.encode`, which checks
 * each field of each record it encodes; a page of 100 meetings spent about 40% of the server's CPU there.
 *
 * `encoded(group, name)` reads the endpoint's success schema, status and encoding from the contract itself, so a
 * handler cannot answer with another endpoint's shape; an endpoint whose success is not one JSON schema is left to
 * the platform (the value is returned as it is).
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { Encode } from "@convene/core"

/** The success value of endpoint `Name` of `Group`. */
type SuccessOf<Group extends HttpApiGroup.HttpApiGroup.Any, Name extends string> = HttpApiEndpoint.HttpApiEndpoint.Success<
  HttpApiEndpoint.HttpApiEndpoint.WithName<HttpApiGroup.HttpApiGroup.Endpoints<Group>, Name>
>

/** The handler's answer for endpoint `name` of `group`: the response the platform would have made of its value. */
export const encoded = <Group extends HttpApiGroup.HttpApiGroup.Any, Name extends HttpApiGroup.HttpApiGroup.Endpoints<Group>["name"]>(
  group: Group,
  name: Name
): (value: SuccessOf<Group, Name>) => SuccessOf<Group, Name> | HttpServerResponse.HttpServerResponse => {
  const endpoint = (group as unknown as HttpApiGroup.HttpApiGroup.AnyWithProps).endpoints[name]
  if (endpoint === undefined) throw new Error(`no endpoint ${name} in the group ${group.identifier}`)
  const ast = endpoint.successSchema.ast
  const encoding = HttpApiSchema.getEncoding(ast)
  if (ast._tag === "Union" || HttpApiSchema.isVoid(ast) || encoding.kind !== "Json") return (value) => value
  const status = HttpApiSchema.getStatusSuccessAST(ast)
  const encode = Encode.encoderOf(endpoint.successSchema)
  return (value) => HttpServerResponse.unsafeJson(encode(value), { status, contentType: encoding.contentType })
}
