import { NavLink } from 'react-router';
import { useScopedHref } from '../ui/links.tsx';

/** The two views of the calls, the list and the overview; the current one has `aria-current`. */
export function CallsTabs() {
  const scoped = useScopedHref();
  return (
    <nav aria-label="Calls views" className="calls-tabs">
      <NavLink to={scoped('/calls')} end>
        List
      </NavLink>
      <NavLink to={scoped('/calls/overview')} end>
        Overview
      </NavLink>
    </nav>
  );
}
