/**
 * The browser routes' bodies: a form over 64 KiB is 413, chunked or not (and the connection closes after the
 * answer), a body that is not a form is 415, each as an HTML page; never a 500 and never the 403 of a forged form.
 */
import { request } from "node:http"
import { describe, expect, it } from "vitest"
import { useServer } from "./fixtures.js"

const post = (url: string, path: string, body: string, headers: Record<string, string>) =>
  new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }>((resolve, reject) => {
    const req = request(`${url}${path}`, { method: "POST", headers }, (res) => {
      let text = ""
      res.setEncoding("utf8")
      res.on("data", (chunk) => (text += chunk))
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, text }))
    })
    req.on("error", reject)
    req.end(body)
  })

describe("form bodies on the browser routes", () => {
  const server = useServer()
  const big = `email=${"a".repeat(100 * 1024)}`

  for (const path of ["/signin", "/signout", "/v1/oauth/authorize", "/account/tokens"]) {
    it(`${path}: 413 for a form over 64 KiB (declared or chunked), 415 for JSON`, async () => {
      const declared = await post(server.url, path, big, { "content-type": "application/x-www-form-urlencoded" })
      expect([declared.status, declared.headers["content-type"], declared.headers.connection]).toEqual([413, "text/html; charset=utf-8", "close"])
      expect(declared.text).toContain("at most 64 KiB")
      const chunked = await post(server.url, path, big, { "content-type": "application/x-www-form-urlencoded", "transfer-encoding": "chunked" })
      expect(chunked.status).toBe(413)
      const json = await post(server.url, path, JSON.stringify({ email: "a@example.com" }), { "content-type": "application/json" })
      expect([json.status, json.headers["content-type"]]).toEqual([415, "text/html; charset=utf-8"])
    })
  }
})
