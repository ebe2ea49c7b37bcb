import { type FormEvent, useState } from 'react';

/**
 * A form's submit handler with its busy flag and error message: `run` gets the form's fields; a
 * thrown error's message is shown (the API's own, see `ApiFailure`).
 */
export function useFormAction(run: (form: FormData) => Promise<void>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(undefined);
    try {
      await run(form);
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    } finally {
      setBusy(false);
    }
  }
  return { busy, error, onSubmit };
}

/** A form field's text (empty when missing). */
export function field(form: FormData, name: string): string {
  const value = form.get(name);
  return typeof value === 'string' ? value : '';
}
