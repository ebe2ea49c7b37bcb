// Usage: the meter (what each project used per day, counted in the work's own statement or
// transaction), the organization's monthly caps and their thresholds, and the gate that ingest,
// the SDK configuration and the model read. Billing (the plan's caps) comes before; everything
// that does metered work after. Other modules import this module only through this file
// (servers/api/README.md, Layout).

export { aiTokenCapReached, NO_CAPS, type PlanCaps } from './caps.ts';
export { usageThresholdEvent } from './events.ts';
export { createUsageGate, type UsageGate } from './gate.ts';
export { meter, meterStatement } from './meter.ts';
export { monthOf } from './metrics.ts';
export { createUsageReporter, reportEndedDays } from './reporting.ts';
