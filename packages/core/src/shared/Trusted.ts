/**
 * Options for a `Schema.Class` constructor fed with values that are already of the right type (rows the
 * store decoded, fields of other validated records): skips re-validation on hot read paths.
 */
export const trusted = { disableValidation: true } as const
