import { useState } from 'react';

/**
 * A signing secret the API shows once (after creating a channel or rotating its secret), with a
 * copy button. It lives in the page's memory only: once dismissed, or after a reload, it is gone.
 */
export function SecretPanel({
  channelName,
  secret,
  rotated,
  onDone,
}: {
  channelName: string;
  secret: string;
  rotated: boolean;
  onDone: () => void;
}) {
  const [copied, setCopied] = useState<'no' | 'yes' | 'failed'>('no');
  async function copy() {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied('yes');
    } catch {
      setCopied('failed');
    }
  }
  return (
    <section className="secret-panel" aria-labelledby="secret-title">
      <h2 id="secret-title">
        {rotated ? 'New signing secret' : 'Signing secret'} of “{channelName}”
      </h2>
      <p>
        <strong>Copy it now: you won’t see it again.</strong> Receivers verify each request’s{' '}
        <code>X-Service-Signature</code> with it (<code>@svc/webhook-verify</code>). The server keeps it
        encrypted and never shows it again.
        {rotated
          ? ' The previous secret keeps signing requests too for 24 hours, so receivers can switch.'
          : ''}
      </p>
      <p className="secret">
        Secret: <code>{secret}</code>
      </p>
      <p className="actions">
        <button type="button" onClick={copy}>
          Copy secret
        </button>
        <button type="button" onClick={onDone}>
          I have saved it
        </button>
        <span role="status">
          {copied === 'yes'
            ? 'Copied.'
            : copied === 'failed'
              ? 'Copying failed: select the text and copy it.'
              : ''}
        </span>
      </p>
    </section>
  );
}
