/** What a message says: paragraphs, and the one link it is about, as a button in HTML. */
export interface MessageContent {
  subject: string;
  paragraphs: string[];
  action?: { label: string; url: string };
  /** A last, smaller paragraph (why the reader got this). */
  footer?: string;
}

function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

/**
 * The plain-text and HTML bodies of a message, the same content in both; everything is escaped
 * in the HTML (names and addresses come from users).
 *
 * @example
 * ```ts
 * const { text, html } = composeMessage({ subject: 'Verify', paragraphs: ['Hi'], action: { label: 'Verify', url } });
 * ```
 */
export function composeMessage(content: MessageContent): { subject: string; text: string; html: string } {
  const textParts = [...content.paragraphs];
  if (content.action !== undefined) textParts.push(`${content.action.label}: ${content.action.url}`);
  if (content.footer !== undefined) textParts.push(content.footer);

  const htmlParts = content.paragraphs.map((paragraph) => `<p>${escapeHtml(paragraph)}</p>`);
  if (content.action !== undefined) {
    const url = escapeHtml(content.action.url);
    htmlParts.push(
      `<p><a href="${url}" style="display:inline-block;padding:10px 16px;background:#1f6feb;color:#ffffff;border-radius:6px;text-decoration:none">${escapeHtml(content.action.label)}</a></p>`,
      `<p style="font-size:13px;color:#555555">Or paste this address into your browser: ${url}</p>`,
    );
  }
  if (content.footer !== undefined)
    htmlParts.push(`<p style="font-size:13px;color:#555555">${escapeHtml(content.footer)}</p>`);
  const html = `<!doctype html><html><body style="font-family:system-ui,sans-serif;line-height:1.5">${htmlParts.join('')}</body></html>`;
  return { subject: content.subject, text: `${textParts.join('\n\n')}\n`, html };
}
