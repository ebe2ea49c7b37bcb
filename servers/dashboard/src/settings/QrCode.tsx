import { generate } from 'lean-qr';
import { useMemo } from 'react';

/** Modules of light margin around the code, as the QR specification asks. */
const QUIET_ZONE = 4;

/**
 * `text` as a QR code, drawn as one SVG path (no script, no data URL: the strict CSP holds). The
 * encoding is `lean-qr`'s (7 kB); `label` is what assistive technologies read instead.
 */
export function QrCode({ text, label, size = 192 }: { text: string; label: string; size?: number }) {
  const { path, modules } = useMemo(() => {
    const code = generate(text);
    const parts: string[] = [];
    for (let y = 0; y < code.size; y += 1)
      for (let x = 0; x < code.size; x += 1)
        if (code.get(x, y)) parts.push(`M${x + QUIET_ZONE} ${y + QUIET_ZONE}h1v1h-1z`);
    return { path: parts.join(''), modules: code.size + 2 * QUIET_ZONE };
  }, [text]);
  return (
    <svg
      role="img"
      aria-label={label}
      width={size}
      height={size}
      viewBox={`0 0 ${modules} ${modules}`}
      shapeRendering="crispEdges"
      className="settings-qr"
    >
      <rect width={modules} height={modules} fill="#fff" />
      <path d={path} fill="#000" />
    </svg>
  );
}
