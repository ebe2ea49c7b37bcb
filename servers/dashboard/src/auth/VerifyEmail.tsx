import { Link } from 'react-router';
import { api } from '../api.ts';
import { once } from './once.ts';
import { TokenPage } from './TokenPage.tsx';

const verify = once(async (token) => {
  await api('POST', '/auth/verify-email', { token });
});

/** The page of a verification link (`/verify-email?token=…`): verifies the address at once. */
export function VerifyEmail() {
  return (
    <TokenPage
      title="Verifying your e-mail address"
      run={verify}
      done={
        <p role="status">
          Your address is verified. <Link to="/login">Sign in</Link>
        </p>
      }
    />
  );
}
