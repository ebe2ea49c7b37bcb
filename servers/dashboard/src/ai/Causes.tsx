import { confidenceLabel } from './labels.ts';
import type { Cause } from './types.ts';

/**
 * Likely causes, surest first, each folded (`details`) on its title and confidence; the first
 * open. Opened: why it is likely, and what to try.
 */
export function Causes({ causes, label }: { causes: Cause[]; label: string }) {
  if (causes.length === 0) return <p className="hint">No likely cause is known for it.</p>;
  return (
    <ul className="ai-causes" aria-label={label}>
      {causes.map((cause, index) => (
        <li key={cause.id}>
          <details open={index === 0} className="ai-cause">
            <summary>
              {cause.title} <span className="ai-confidence">({confidenceLabel(cause.confidence)})</span>
            </summary>
            <p>{cause.why}</p>
            {cause.tryThis.length === 0 ? null : (
              <>
                <p className="ai-try-title">What to try</p>
                <ul className="ai-try">
                  {cause.tryThis.map((step) => (
                    <li key={step}>{step}</li>
                  ))}
                </ul>
              </>
            )}
          </details>
        </li>
      ))}
    </ul>
  );
}
