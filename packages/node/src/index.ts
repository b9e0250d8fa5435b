export * as NodeCrypto from "./NodeCrypto.js"
