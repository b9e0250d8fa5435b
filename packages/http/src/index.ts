export { Api } from "./api/Api.js"
export * from "./api/Security.js"
export * from "./Config.js"
export * from "./Server.js"
