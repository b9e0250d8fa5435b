export * as JoseJwtSigner from "./JoseJwtSigner.js"
export * as NodeCrypto from "./NodeCrypto.js"
export * as NodeSecretBox from "./NodeSecretBox.js"
