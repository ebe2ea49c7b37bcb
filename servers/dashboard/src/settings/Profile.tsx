import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, type Me, type User } from '../api.ts';
import { LinkedIdentities } from '../auth/oauth/LinkedIdentities.tsx';
import { formatDateTime } from '../ui/format.ts';
import { ErrorText, QueryState } from '../ui/status.tsx';
import { useWorkspace } from '../ui/workspace.tsx';
import { Passkeys } from './Passkeys.tsx';
import { StatusText } from './parts.tsx';
import { QrCode } from './QrCode.tsx';
import { SettingsLayout } from './SettingsLayout.tsx';
import type { SignedInSession } from './types.ts';

/** The signed-in person's own settings: name, password, two-factor sign-in, passkeys, sessions. */
export function ProfilePage() {
  return (
    <SettingsLayout title="Your profile">
      <ProfileForm />
      <PasswordForm />
      <TwoFactor />
      <Passkeys />
      <LinkedIdentities />
      <Sessions />
    </SettingsLayout>
  );
}

function ProfileForm() {
  const { me } = useWorkspace();
  const queryClient = useQueryClient();
  const [name, setName] = useState(me.user.name ?? '');
  const save = useMutation({
    mutationFn: () =>
      api<{ user: User; csrfToken: string }>('PATCH', '/v1/me', { name: name.trim() === '' ? null : name }),
    onSuccess: ({ user }) =>
      queryClient.setQueryData<Me>(['me'], (current) => current && { ...current, user }),
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    save.mutate();
  }
  return (
    <section className="settings-section" aria-labelledby="profile-title">
      <h2 id="profile-title">Profile</h2>
      <form onSubmit={submit} noValidate className="settings-form" aria-label="Profile">
        <p>
          E-mail address: <strong>{me.user.email}</strong>
        </p>
        <label>
          Your name
          <input value={name} onChange={(event) => setName(event.target.value)} autoComplete="name" />
        </label>
        {save.error ? <ErrorText>{save.error.message}</ErrorText> : null}
        {save.isSuccess ? <StatusText>Your name is saved.</StatusText> : null}
        <div className="settings-actions">
          <button type="submit" className="primary" disabled={save.isPending}>
            Save profile
          </button>
        </div>
      </form>
    </section>
  );
}

function PasswordForm() {
  const queryClient = useQueryClient();
  const [currentPassword, setCurrentPassword] = useState('');
  const [newPassword, setNewPassword] = useState('');
  const change = useMutation({
    mutationFn: () => api('POST', '/v1/me/password', { currentPassword, newPassword }),
    onSuccess: () => {
      setCurrentPassword('');
      setNewPassword('');
      return queryClient.invalidateQueries({ queryKey: ['settings', 'my-sessions'] });
    },
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    change.mutate();
  }
  return (
    <section className="settings-section" aria-labelledby="password-title">
      <h2 id="password-title">Password</h2>
      <form onSubmit={submit} noValidate className="settings-form" aria-label="Change password">
        <label>
          Current password
          <input
            type="password"
            autoComplete="current-password"
            value={currentPassword}
            onChange={(event) => setCurrentPassword(event.target.value)}
          />
        </label>
        <label>
          New password (at least 8 characters)
          <input
            type="password"
            autoComplete="new-password"
            value={newPassword}
            onChange={(event) => setNewPassword(event.target.value)}
          />
        </label>
        {change.error ? <ErrorText>{change.error.message}</ErrorText> : null}
        {change.isSuccess ? (
          <StatusText>Password changed. Your other sessions were signed out.</StatusText>
        ) : null}
        <div className="settings-actions">
          <button type="submit" className="primary" disabled={change.isPending}>
            Change password
          </button>
        </div>
      </form>
    </section>
  );
}

type TwoFactorStep =
  | { step: 'idle' }
  | { step: 'enrolled'; secret: string; otpauthUri: string }
  | { step: 'codes'; recoveryCodes: string[] };

/** `JBSWY3DPEHPK3PXP` → `JBSW Y3DP EHPK 3PXP`, easier to type into an app. */
function grouped(secret: string): string {
  return secret.replace(/(.{4})(?=.)/g, '$1 ');
}

/**
 * Two-factor sign-in (TOTP): set up with the password, the secret as a QR code, as text to type or
 * as the `otpauth:` link to open in an authenticator app, a first code to turn it on, the recovery codes shown once;
 * turning it off and new recovery codes take a code.
 */
function TwoFactor() {
  const { me } = useWorkspace();
  const queryClient = useQueryClient();
  const [state, setState] = useState<TwoFactorStep>({ step: 'idle' });
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [message, setMessage] = useState<string | undefined>();
  const refreshMe = () => queryClient.invalidateQueries({ queryKey: ['me'] });
  const enroll = useMutation({
    mutationFn: () => api<{ secret: string; otpauthUri: string }>('POST', '/v1/me/mfa/enroll', { password }),
    onSuccess: (answer) => {
      setPassword('');
      setState({ step: 'enrolled', ...answer });
    },
  });
  const confirm = useMutation({
    mutationFn: () => api<{ recoveryCodes: string[] }>('POST', '/v1/me/mfa/confirm', { code: code.trim() }),
    onSuccess: ({ recoveryCodes }) => {
      setCode('');
      setState({ step: 'codes', recoveryCodes });
      setMessage('Two-factor sign-in is on.');
      return refreshMe();
    },
  });
  const disable = useMutation({
    mutationFn: () => api<void>('POST', '/v1/me/mfa/disable', { code: code.trim() }),
    onSuccess: () => {
      setCode('');
      setMessage('Two-factor sign-in is off.');
      return refreshMe();
    },
  });
  const replace = useMutation({
    mutationFn: () =>
      api<{ recoveryCodes: string[] }>('POST', '/v1/me/mfa/recovery-codes', { code: code.trim() }),
    onSuccess: ({ recoveryCodes }) => {
      setCode('');
      setState({ step: 'codes', recoveryCodes });
      setMessage('New recovery codes: the old ones no longer work.');
    },
  });
  const error = enroll.error ?? confirm.error ?? disable.error ?? replace.error;
  const reset = () => {
    for (const mutation of [enroll, confirm, disable, replace]) mutation.reset();
    setMessage(undefined);
  };

  return (
    <section className="settings-section" aria-labelledby="mfa-title">
      <h2 id="mfa-title">Two-factor sign-in</h2>
      <p>
        Status: <strong>{me.mfaEnabled ? 'on' : 'off'}</strong>. With it on, signing in asks for a code from
        an authenticator app after the password.
      </p>
      {message === undefined ? null : <StatusText>{message}</StatusText>}
      {error ? <ErrorText>{error.message}</ErrorText> : null}

      {state.step === 'codes' ? (
        <div className="settings-secret">
          <h3 className="settings-subheading">Recovery codes</h3>
          <p>
            <strong>Keep these somewhere safe: they are not shown again.</strong> Each signs you in once
            instead of a code from the app.
          </p>
          <ul aria-label="Recovery codes" className="settings-codes">
            {state.recoveryCodes.map((recoveryCode) => (
              <li key={recoveryCode}>
                <code>{recoveryCode}</code>
              </li>
            ))}
          </ul>
          <button
            type="button"
            onClick={() => {
              setState({ step: 'idle' });
              reset();
            }}
          >
            Done, I saved them
          </button>
        </div>
      ) : me.mfaEnabled ? (
        <form
          className="settings-form"
          aria-label="Two-factor sign-in"
          noValidate
          onSubmit={(event) => event.preventDefault()}
        >
          <label>
            Code from your app, or a recovery code
            <input
              value={code}
              onChange={(event) => setCode(event.target.value)}
              autoComplete="one-time-code"
              inputMode="text"
            />
          </label>
          <div className="settings-actions">
            <button type="button" onClick={() => disable.mutate()} disabled={disable.isPending}>
              Turn off two-factor sign-in
            </button>
            <button type="button" onClick={() => replace.mutate()} disabled={replace.isPending}>
              Replace recovery codes
            </button>
          </div>
        </form>
      ) : state.step === 'enrolled' ? (
        <form
          className="settings-form"
          aria-label="Confirm two-factor sign-in"
          noValidate
          onSubmit={(event) => {
            event.preventDefault();
            confirm.mutate();
          }}
        >
          <p>
            Scan this code with your authenticator app, or type the key into it (time-based, 6 digits), or
            open the link on the phone that has the app:
          </p>
          <QrCode text={state.otpauthUri} label="QR code of the two-factor key for an authenticator app" />
          <p className="settings-row">
            <code data-testid="mfa-secret">{grouped(state.secret)}</code>
          </p>
          <p>
            <a href={state.otpauthUri}>Open in an authenticator app</a>
          </p>
          <label>
            The 6-digit code the app shows
            <input
              value={code}
              onChange={(event) => setCode(event.target.value)}
              autoComplete="one-time-code"
              inputMode="numeric"
            />
          </label>
          <div className="settings-actions">
            <button type="submit" className="primary" disabled={confirm.isPending}>
              Turn on two-factor sign-in
            </button>
            <button
              type="button"
              onClick={() => {
                setState({ step: 'idle' });
                reset();
              }}
            >
              Cancel
            </button>
          </div>
        </form>
      ) : (
        <form
          className="settings-form"
          aria-label="Set up two-factor sign-in"
          noValidate
          onSubmit={(event) => {
            event.preventDefault();
            enroll.mutate();
          }}
        >
          <label>
            Your password, to set up two-factor sign-in
            <input
              type="password"
              autoComplete="current-password"
              value={password}
              onChange={(event) => setPassword(event.target.value)}
            />
          </label>
          <div className="settings-actions">
            <button type="submit" className="primary" disabled={enroll.isPending}>
              Set up two-factor sign-in
            </button>
          </div>
        </form>
      )}
    </section>
  );
}

/** A user agent in a few words: `Chrome 130 on Linux`. */
export function describeDevice(userAgent: string | undefined): string {
  if (userAgent === undefined || userAgent === '') return 'Unknown device';
  const browser =
    [
      ['Edge', /Edg\/(\d+)/],
      ['Firefox', /Firefox\/(\d+)/],
      ['Chrome', /Chrome\/(\d+)/],
      ['Safari', /Version\/(\d+).*Safari/],
    ]
      .map(([name, pattern]) => {
        const match = (pattern as RegExp).exec(userAgent);
        return match === null ? undefined : `${name as string} ${match[1]}`;
      })
      .find((found) => found !== undefined) ?? userAgent.split(' ')[0];
  const system = [
    ['Android', /Android/],
    ['iOS', /iPhone|iPad/],
    ['Windows', /Windows/],
    ['macOS', /Mac OS X/],
    ['Linux', /Linux/],
  ].find(([, pattern]) => (pattern as RegExp).test(userAgent))?.[0] as string | undefined;
  return system === undefined ? (browser ?? 'Unknown device') : `${browser} on ${system}`;
}

/** Where the person is signed in: end one session, or every other one. */
function Sessions() {
  const queryClient = useQueryClient();
  const key = ['settings', 'my-sessions'];
  const sessions = useQuery({
    queryKey: key,
    queryFn: () => api<{ sessions: SignedInSession[] }>('GET', '/v1/me/sessions'),
  });
  const [message, setMessage] = useState<string | undefined>();
  const end = useMutation({
    mutationFn: (session: SignedInSession) => api<void>('DELETE', `/v1/me/sessions/${session.id}`),
    onSuccess: () => setMessage('That session is signed out.'),
    onSettled: () => queryClient.invalidateQueries({ queryKey: key }),
  });
  const endOthers = useMutation({
    mutationFn: () => api<{ ended: number }>('DELETE', '/v1/me/sessions'),
    onSuccess: ({ ended }) =>
      setMessage(
        ended === 1 ? 'One other session was signed out.' : `${ended} other sessions were signed out.`,
      ),
    onSettled: () => queryClient.invalidateQueries({ queryKey: key }),
  });
  const error = end.error ?? endOthers.error;
  return (
    <section className="settings-section" aria-labelledby="sessions-title">
      <h2 id="sessions-title">Where you are signed in</h2>
      {error ? <ErrorText>{error.message}</ErrorText> : null}
      {message === undefined ? null : <StatusText>{message}</StatusText>}
      <QueryState query={sessions}>
        {(data) => (
          <>
            <table>
              <thead>
                <tr>
                  <th scope="col">Device</th>
                  <th scope="col">Address</th>
                  <th scope="col">Signed in</th>
                  <th scope="col">Last active</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {data.sessions.map((session) => {
                  const device = describeDevice(session.userAgent);
                  return (
                    <tr key={session.id} data-session-id={session.id}>
                      <td>
                        <span title={session.userAgent}>{device}</span>
                      </td>
                      <td>{session.ip ?? '—'}</td>
                      <td>{formatDateTime(session.createdAt)}</td>
                      <td>{formatDateTime(session.lastSeenAt)}</td>
                      <td>
                        {session.current ? (
                          <strong>This session</strong>
                        ) : (
                          <button type="button" onClick={() => end.mutate(session)} disabled={end.isPending}>
                            Sign out{' '}
                            <span className="visually-hidden">
                              {device} signed in {formatDateTime(session.createdAt)}
                            </span>
                          </button>
                        )}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
            {data.sessions.some((session) => !session.current) ? (
              <button type="button" onClick={() => endOthers.mutate()} disabled={endOthers.isPending}>
                Sign out everywhere else
              </button>
            ) : null}
          </>
        )}
      </QueryState>
    </section>
  );
}
