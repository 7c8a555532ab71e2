"""An evaluation set for search over coding-agent sessions: target prompts, the queries
that should find them, and near-miss prompts around them, written as a Claude Code home.

- :data:`TARGETS`: prompts (with the assistant's reply) that a query should find.
- :data:`PARAPHRASES`: how a person remembers a target weeks later. A paraphrase shares
  no content word with its target's prompt (lowercased, split on non-alphanumerics, stop
  words and one-character words dropped, Porter-stemmed), so only a search that matches
  meaning, not words, can find it.
- :data:`LEXICAL`: an identifier, error code or file name from a target's prompt, which
  occurs in at most two other events of the home: only a search on exact words finds it.
- :data:`DISTRACTORS`: prompts on the targets' topics about something else.

:func:`write_eval_home` spreads targets and distractors over sessions of several
projects, beside the generic synthetic sessions of four agents.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Final, NamedTuple


class Target(NamedTuple):
    """A prompt a query should find, and the assistant's reply to it."""

    id: str
    prompt: str
    reply: str


class Query(NamedTuple):
    """A search query and the id of the target it should find."""

    target: str
    text: str


class EvalEvent(NamedTuple):
    """Where :func:`write_eval_home` wrote a target: its session and exact texts."""

    session_id: str
    prompt: str
    reply: str


TARGETS: Final[tuple[Target, ...]] = (
    Target(
        "auth-blank-pw",
        "login endpoint throws 500 when pw field is blank, stack trace points at "
        "bcrypt.compare(undefined). fix pls",
        "bcrypt got undefined because the validator let a zero-length string through. I added "
        "a required rule to the request schema and the route now answers 400 with a message.",
    ),
    Target(
        "css-footer-float",
        "footer keeps floating up into the middle of the viewport on short pages like /about. "
        "want it glued to the bottom without position fixed",
        "Made body a flex column with min-height: 100vh and gave main flex: 1, so the last "
        "block sits at the end of short pages and scrolls normally on long ones.",
    ),
    Target(
        "migration-rename-column",
        "alembic autogenerate wants to drop users.fullname and add users.display_name, that "
        "would nuke the data in prod. how do i make it a rename instead",
        "Autogenerate can't detect renames. I edited the revision to use op.alter_column("
        "new_column_name=...) and removed the drop/add pair; downgrade renames it back.",
    ),
    Target(
        "ci-cache-node-modules",
        "our github actions workflow takes 9 minutes and most of it is npm ci. can we cache "
        "node_modules between runs",
        "Added actions/setup-node with cache: npm keyed on package-lock.json. Restores the "
        "~/.npm store, so installs drop to about 40 seconds on a warm hit.",
    ),
    Target(
        "docker-image-size",
        "the api docker image is 2.3GB?? it's a tiny flask app. shrink it",
        "Switched to a multi-stage build: wheels compiled in a builder stage, runtime on "
        "python:3.12-slim, and a .dockerignore that skips .git and tests. It is 180 MB now.",
    ),
    Target(
        "rust-borrow-e0502",
        "getting E0502 cannot borrow `self.items` as mutable because it is also borrowed as "
        "immutable in fn refresh(). the loop reads self.items and calls self.push_update",
        "The iterator holds a shared reference while push_update needs &mut self. I collect "
        "the ids first into a Vec, end that borrow, then loop over the Vec and mutate.",
    ),
    Target(
        "flaky-date-test",
        "test_invoice_due_date fails maybe 1 in 10 runs on CI and never locally. no idea why",
        "It compares against datetime.now() twice; when the run crosses midnight UTC the two "
        "calls land on different days. I froze the clock with a fixture and it is stable.",
    ),
    Target(
        "memory-leak-listeners",
        "our electron app's RAM grows ~50MB every time you open and close the settings "
        "window. heap snapshot shows thousands of detached HTMLDivElement",
        "The settings view registers ipcRenderer listeners on mount and never removes them, "
        "so each closed window stays reachable. I added removeListener calls in the cleanup.",
    ),
    Target(
        "i18n-plural-polish",
        "translations for polish show '5 plik' instead of '5 plików', our t() only knows "
        "one/other. how do plural forms work here",
        "Polish needs one, few and many categories. I switched the catalog to ICU plural "
        "syntax and Intl.PluralRules picks the category, so 5 now gets the many form.",
    ),
    Target(
        "stripe-double-charge",
        "customer got charged twice for the same order, both charges 3 seconds apart. "
        "checkout button calls createPaymentIntent on click",
        "A double click sent two requests. I pass the order id as an idempotency key to "
        "Stripe and disable the button while the request is in flight.",
    ),
    Target(
        "redis-stale-cache",
        "after updating a product price the old price still shows for like an hour. we cache "
        "product pages in redis with a 3600 ttl",
        "The update path never invalidated the key. I delete product:{id} after the "
        "transaction commits and the next read repopulates it.",
    ),
    Target(
        "git-force-push-lost",
        "i did git push --force on the shared feature branch and now my teammates commits "
        "from yesterday are gone from github. help!!",
        "Their commits are still in your local reflog or in their clones. I found the old tip "
        "with git reflog, reset the branch to it and pushed with --force-with-lease.",
    ),
    Target(
        "k8s-crashloop",
        "payments pod is in CrashLoopBackOff after the deploy, kubectl logs shows nothing "
        "useful, just exits with code 1",
        "kubectl logs --previous showed the app died reading DATABASE_URL, which the new "
        "deployment no longer mounts from the secret. I restored the envFrom entry.",
    ),
    Target(
        "slow-orders-query",
        "the /orders admin page takes 12s to load. django debug toolbar says 400 queries",
        "Classic N+1: each row touched order.customer and order.items. I added "
        "select_related('customer') and prefetch_related('items'); it runs 3 queries now.",
    ),
    Target(
        "a11y-modal-focus",
        "screen reader users complain they can tab out of our dialog into the page behind it",
        "I trap focus inside the dialog while it is open, set aria-modal and inert on the "
        "rest of the document, and return focus to the trigger when it closes.",
    ),
    Target(
        "zustand-rerender",
        "every component using useAuthStore re-renders on each keystroke in the search box, "
        "even the header which only reads user.name",
        "The components subscribed to the whole store object. I changed them to selectors "
        "like useAuthStore(s => s.user.name) with shallow compare, so typing no longer "
        "re-renders them.",
    ),
    Target(
        "pg-pool-exhausted",
        "under load we get 'sorry, too many clients already'. PG_MAX_CONNECTIONS is 100 and "
        "we run 8 gunicorn workers each with pool size 20",
        "8 x 20 is 160 connections against a limit of 100. I lowered the pool to 10 per "
        "worker and put pgbouncer in transaction mode in front of the database.",
    ),
    Target(
        "node-openssl-error",
        "npm run build fails with ERR_OSSL_EVP_UNSUPPORTED after I upgraded to node 18",
        "Webpack 4 hashes with md4, which OpenSSL 3 dropped. Upgrading to webpack 5 fixes "
        "it; as a stopgap NODE_OPTIONS=--openssl-legacy-provider works.",
    ),
    Target(
        "webpack-alias",
        "imports like '@/components/Button' work in the editor but the build says module not "
        "found. alias is only in tsconfig, do i need it in webpack.config.js too",
        "Yes, webpack doesn't read tsconfig paths. I added resolve.alias for '@' pointing to "
        "src, or tsconfig-paths-webpack-plugin can mirror them automatically.",
    ),
    Target(
        "pg-deadlock",
        "seeing deadlock detected SQLSTATE 40P01 in the logs when two transfer jobs run at "
        "the same time",
        "Both jobs lock the two account rows in opposite order. I lock them sorted by id "
        "with SELECT ... FOR UPDATE, so the second job waits instead of deadlocking.",
    ),
    Target(
        "worker-oomkilled",
        "the image thumbnail worker gets OOMKilled every few hours, memory limit 512Mi, "
        "usage climbs steadily",
        "Pillow images were kept in a module-level list used for debugging. I removed it and "
        "close each image in a with block; memory now stays flat around 150Mi.",
    ),
    Target(
        "renovate-grouping",
        "renovate opens like 30 PRs a week, can we group all the eslint stuff and the "
        "@types packages into one each? config is renovate.json5",
        "Added packageRules grouping eslint* and @types/* under their own group names, "
        "with a weekly schedule, so there are two batched PRs instead of thirty.",
    ),
    Target(
        "flaky-econnreset",
        "integration tests randomly die with ECONNRESET talking to the mock server, more "
        "often when run in parallel",
        "The mock server closed keep-alive sockets after 5 s while the client reused them. "
        "I set the agent's keepAlive timeout below the server's and the errors stopped.",
    ),
    Target(
        "stripe-webhook-signature",
        "handleStripeWebhook always returns 400 signature verification failed, the secret is "
        "right i checked 3 times",
        "Express's json parser had already turned the body into an object, so the signature "
        "was computed over different bytes. The webhook route now uses express.raw.",
    ),
    Target(
        "a11y-error-text",
        "form errors aren't read out by voiceover. we show them in a red span under the "
        "input. should i use aria-describedby?",
        "Yes: I give each error span an id, point the input's aria-describedby at it and set "
        "aria-invalid, and the summary at the top is a live region.",
    ),
    Target(
        "css-grid-areas",
        "dashboard layout: sidebar left, header top, two cards side by side, chart full width "
        "below. flexbox is getting ugly, can grid-template-areas do this",
        "Yes. I defined named areas for sidebar, header, cards and chart, and a media query "
        "that stacks them into one column under 768px.",
    ),
    Target(
        "git-bad-rebase",
        "interactive rebase went wrong, squashed the wrong commits and now the branch is a "
        "mess. can I get back to before the rebase? someone said ORIG_HEAD",
        "Right after a rebase ORIG_HEAD points at the old tip. I ran git reset --hard "
        "ORIG_HEAD and the branch is back; then we redid the squash with the right picks.",
    ),
    Target(
        "cpp-segfault",
        "the parser binary SIGSEGV's on some inputs only in release build, debug is fine",
        "AddressSanitizer found a read past the end of the token buffer when the input ends "
        "without a newline; debug builds padded the allocation. I fixed the bounds check.",
    ),
    Target(
        "request-id-header",
        "can we propagate X-Request-Id from nginx through the api to the worker so we can "
        "trace one request across logs",
        "Middleware reads the header (or generates one), stores it in a contextvar, the log "
        "formatter includes it, and the task enqueue copies it into the job metadata.",
    ),
    Target(
        "mysql-packet",
        "importing the big dump fails with 'Packet too large', how do I raise "
        "max_allowed_packet on RDS",
        "RDS doesn't allow SET GLOBAL for it; I created a custom parameter group with "
        "max_allowed_packet=256M, attached it and rebooted the instance.",
    ),
    Target(
        "jwt-expiry-logout",
        "users get kicked out after exactly 15 minutes even when they're actively using the app",
        "The access token lives 15 minutes and nothing refreshed it. I added a refresh-token "
        "flow: an interceptor retries a 401 once after calling /auth/refresh.",
    ),
    Target(
        "csrf-form-403",
        "after we moved to the new domain every POST from the settings form is 403 forbidden. "
        "GETs fine",
        "The CSRF cookie was still scoped to the old domain, so the token never matched. I "
        "updated CSRF_COOKIE_DOMAIN and CSRF_TRUSTED_ORIGINS.",
    ),
    Target(
        "oauth-redirect-mismatch",
        "google sign in gives redirect_uri_mismatch on staging but works on localhost",
        "Staging sits behind a proxy, so the app built the callback URL with http. I trust "
        "X-Forwarded-Proto and registered the https staging callback in the console.",
    ),
    Target(
        "css-zindex-dropdown",
        "the dropdown menu shows behind the cards below it no matter what z-index i set, "
        "tried 99999",
        "The card list creates a new stacking context with transform, so z-index only counts "
        "inside it. I render the menu in a portal at the end of body.",
    ),
    Target(
        "dark-mode-flash",
        "when you reload in dark mode the page flashes white for a split second before "
        "switching. nextjs app",
        "The theme was applied in a useEffect after hydration. A tiny inline script in the "
        "document head now sets the class from localStorage before first paint.",
    ),
    Target(
        "migration-locks-table",
        "adding an index on events(created_at) took the site down for 4 min yesterday "
        "because the migration locked the table",
        "Postgres builds indexes with a write lock by default. The migration now uses "
        "CREATE INDEX CONCURRENTLY outside a transaction, so writes keep flowing.",
    ),
    Target(
        "ci-secrets-fork",
        "PRs from forks fail at the deploy preview step, the VERCEL_TOKEN secret is empty there",
        "Secrets aren't exposed to workflows triggered by forked pull requests. I skip the "
        "preview step for forks; a maintainer label can trigger it via pull_request_target.",
    ),
    Target(
        "docker-compose-hostname",
        "inside docker compose the api can't reach postgres at localhost:5432, works when I "
        "run it outside docker",
        "Each container has its own localhost. I changed the host to the service name, db, "
        "and added depends_on with a healthcheck so the api waits for it.",
    ),
    Target(
        "rust-lifetime-struct",
        "how do i store a &str in a struct, compiler keeps asking for lifetime specifiers "
        "and then says borrowed value does not live long enough",
        "The struct would outlive the string it points into. Since you build them in a loop, "
        "owning the data with String is simpler than threading a lifetime parameter.",
    ),
    Target(
        "python-leak-lru",
        "memory of the api process keeps going up over days, tracemalloc top is functools "
        "lru_cache in get_user_permissions",
        "The cache is unbounded and keyed on a request object, so every call adds an entry. "
        "I key it on the user id and cap it with maxsize=1024.",
    ),
    Target(
        "timezone-report-wrong",
        "the daily sales report emailed at 8am shows yesterday's numbers cut off at 7pm, "
        "customers are in sydney",
        "The day boundaries were computed in UTC. I compute them in Australia/Sydney with "
        "zoneinfo and convert to UTC only for the query.",
    ),
    Target(
        "emoji-truncation",
        "our tweet-length counter cuts emoji in half and shows a ? box at the end of the preview",
        "slice() counts UTF-16 code units and split a surrogate pair. I use Intl.Segmenter "
        "to count and cut on grapheme clusters.",
    ),
    Target(
        "rtl-layout",
        "adding arabic, whole layout needs to mirror. do i really have to rewrite every "
        "margin-left",
        "Mostly no: I replaced physical properties with logical ones (margin-inline-start, "
        "padding-inline-end) and set dir=rtl on html from the locale.",
    ),
    Target(
        "rate-limit-429",
        "our nightly sync against the shopify api dies halfway with 429s",
        "I read the Retry-After header and back off with jitter, and the client now spaces "
        "calls to stay under the leaky bucket's rate.",
    ),
    Target(
        "cdn-cache-purge",
        "pushed a new css build but users still get the old styles, cloudfront",
        "The file name never changed, so the CDN kept serving the cached object. The build "
        "now adds a content hash to asset names and index.html is served no-cache.",
    ),
    Target(
        "git-secret-committed",
        "oops committed the .env with the aws keys and pushed to github 10 min ago",
        "I rotated the keys first, since they must be treated as leaked. Then git filter-repo "
        "removed the file from history and .env went into .gitignore.",
    ),
    Target(
        "git-lfs-psd",
        "the repo is 4 gigs because designers commit the photoshop files, clone takes forever",
        "I moved *.psd to Git LFS with git lfs migrate import over the history; clones now "
        "fetch pointers and only check out the large files that are needed.",
    ),
    Target(
        "k8s-readiness",
        "during rolling deploys we get a burst of 502s for ~20 seconds",
        "New pods got traffic before the app finished warming up, and old ones were killed "
        "mid-request. I added a readiness probe and a preStop sleep.",
    ),
    Target(
        "k8s-hpa-not-scaling",
        "the horizontal pod autoscaler never adds pods even when cpu is pegged at 100%",
        "The deployment had no CPU requests, so utilization could not be computed and the "
        "HPA showed <unknown>. I set requests and it scales now.",
    ),
    Target(
        "react-list-slow",
        "rendering the 10k row customer table freezes the browser for several seconds",
        "I virtualized it with react-window so only the visible rows mount, and memoized the "
        "row component.",
    ),
    Target(
        "bundle-size-moment",
        "our main js bundle is 1.8MB, analyzer shows moment with every locale",
        "Replaced moment with date-fns (tree-shakable) and imported only the two locales we "
        "ship; the bundle is 640 KB now.",
    ),
    Target(
        "cors-preflight",
        "browser says blocked by CORS policy on PUT requests but GET works fine from the same "
        "origin",
        "PUT triggers a preflight OPTIONS request, which the API answered with 404. I added "
        "the OPTIONS handler with Access-Control-Allow-Methods including PUT.",
    ),
    Target(
        "session-fixation",
        "security audit flagged that the session id doesn't change after login",
        "I regenerate the session on successful authentication and invalidate the old one, "
        "and the cookie is now Secure, HttpOnly and SameSite=Lax.",
    ),
    Target(
        "password-hash-upgrade",
        "we still store passwords as sha1 from 2014. want argon2 without forcing everyone to reset",
        "Hashes are upgraded on login: verify with the old scheme, then rehash with argon2 and "
        "store it with a prefix, so the rest migrate as people sign in.",
    ),
    Target(
        "python-asyncio-blocking",
        "fastapi endpoint that calls requests.get blocks every other request while it waits",
        "requests is synchronous and ran on the event loop. I switched to httpx.AsyncClient "
        "and awaited it; alternatively define the endpoint with plain def.",
    ),
    Target(
        "celery-duplicate-emails",
        "users sometimes get the welcome email 2 or 3 times, sent from a celery task",
        "The task ran longer than the broker's visibility timeout and was redelivered. I made "
        "it idempotent with a sent flag and raised the visibility timeout.",
    ),
    Target(
        "sqlite-locked",
        "sqlite3.OperationalError: database is locked when the cron job and the web app touch "
        "the db at the same time",
        "I enabled WAL mode so readers don't block the writer, and set a busy_timeout so the "
        "second writer waits instead of failing.",
    ),
    Target(
        "mobile-safari-vh",
        "on iphone the bottom button of the signup screen is hidden behind the browser toolbar",
        "100vh in mobile Safari includes the collapsing toolbar. I use 100dvh with a vh "
        "fallback and add env(safe-area-inset-bottom) padding.",
    ),
    Target(
        "font-loading-cls",
        "lighthouse says cumulative layout shift 0.35, the headline jumps when the custom "
        "font arrives",
        "I preload the font, use font-display: optional and a fallback with size-adjust "
        "matched to the web font, so the text keeps its size.",
    ),
    Target(
        "terraform-state-lock",
        "terraform apply hangs then says Error acquiring the state lock, nobody else is running it",
        "A previous run was killed and left the DynamoDB lock item. After checking nobody "
        "was applying, I ran terraform force-unlock with the lock id.",
    ),
    Target(
        "go-goroutine-leak",
        "our go service's goroutine count grows forever, pprof shows them stuck in chan send",
        "Workers sent results to an unbuffered channel nobody read after a timeout. I pass "
        "a context and select on ctx.Done() so they exit.",
    ),
    Target(
        "graphql-n-plus-one",
        "the graphql query for posts with authors hits the db once per post",
        "I added a DataLoader that batches author ids per request and loads them in one query.",
    ),
    Target(
        "s3-presigned-expired",
        "users uploading big videos get AccessDenied halfway through, uploads go straight "
        "to s3 with a presigned url",
        "The URL expired after 15 minutes, before long uploads finished. I moved to "
        "multipart upload with a presigned URL per part.",
    ),
)

PARAPHRASES: Final[tuple[Query, ...]] = (
    Query(
        "auth-blank-pw", "the time sign-in crashed if someone submitted without typing a passcode"
    ),
    Query(
        "css-footer-float",
        "the layout where the site's closing strip hovered mid-screen whenever there wasn't much content",
    ),
    Query(
        "migration-rename-column",
        "when the db change generator was about to throw away a customer label field and wipe real info",
    ),
    Query(
        "ci-cache-node-modules", "speeding up the slow pipeline by reusing downloaded dependencies"
    ),
    Query("docker-image-size", "container weighing gigabytes for a little web service"),
    Query(
        "rust-borrow-e0502",
        "compiler refusing when I walked over a list while changing it inside a method",
    ),
    Query(
        "flaky-date-test",
        "billing spec that broke only on the build machine once in a while, around 12am",
    ),
    Query(
        "memory-leak-listeners",
        "desktop program eating more memory whenever the preferences popup was shown and dismissed",
    ),
    Query("i18n-plural-polish", "wrong grammatical count endings in a slavic language"),
    Query("stripe-double-charge", "buyer billed extra after mashing the pay control"),
    Query("redis-stale-cache", "outdated cost displayed for an item after editing it"),
    Query("git-force-push-lost", "overwrote colleagues' work on the remote and had to recover it"),
    Query(
        "k8s-crashloop",
        "billing service restarting over and over after a release, missing connection setting",
    ),
    Query(
        "slow-orders-query", "back-office list that took forever because of hundreds of sql calls"
    ),
    Query("a11y-modal-focus", "keyboard navigation escaping the popup for blind people"),
    Query(
        "zustand-rerender",
        "everything redrawing with each keypress in the filter input because of a global state hook",
    ),
    Query(
        "pg-pool-exhausted",
        "postgres refusing new sessions once traffic grew, more app processes than it allowed",
    ),
    Query(
        "node-openssl-error",
        "bundler broke with a crypto digest complaint after moving to a newer javascript runtime",
    ),
    Query(
        "webpack-alias", "shortcut prefix with an at sign fine in vscode yet broken when bundling"
    ),
    Query("pg-deadlock", "money movement tasks blocking each other in postgres"),
    Query("worker-oomkilled", "preview-picture resizer killed for exceeding its ram cap"),
    Query(
        "renovate-grouping",
        "too many automatic dependency bump pull requests, bundle them together",
    ),
    Query(
        "flaky-econnreset", "sporadic connection hangups against the fake http service in the suite"
    ),
    Query(
        "stripe-webhook-signature",
        "payment provider callbacks rejected because the node framework parsed the payload first",
    ),
    Query("a11y-error-text", "apple narrator not announcing validation messages on our fields"),
    Query("css-grid-areas", "a 2d regions setup for the analytics screen with a nav rail"),
    Query("git-bad-rebase", "undoing a history rewrite that merged the incorrect changes together"),
    Query("cpp-segfault", "segfault in the optimized compile that a sanitizer tracked down"),
    Query(
        "request-id-header",
        "following a single call end to end between services via a correlation identifier",
    ),
    Query("mysql-packet", "huge database restore erroring on amazon's managed mysql"),
    Query("jwt-expiry-logout", "people signed out every quarter hour while in the middle of work"),
    Query("csrf-form-403", "saving preferences rejected after the site changed its address"),
    Query("oauth-redirect-mismatch", "social login return address error on the test environment"),
    Query(
        "css-zindex-dropdown", "popup choices stuck underneath other boxes despite layering tweaks"
    ),
    Query("dark-mode-flash", "bright blink on refresh with the night colour scheme"),
    Query("migration-locks-table", "outage from a schema change that froze a huge relation"),
    Query("ci-secrets-fork", "staging builds broken for outside contributors' patches"),
    Query(
        "docker-compose-hostname",
        "networking mixup: backend looked for the sql server on the loopback address",
    ),
    Query(
        "rust-lifetime-struct",
        "putting a text slice reference inside a type and fighting rustc about scopes",
    ),
    Query(
        "python-leak-lru",
        "backend worker bloating for weeks because of a memoization with no limit",
    ),
    Query(
        "timezone-report-wrong", "morning revenue summary missing the evening for australian shops"
    ),
    Query("emoji-truncation", "character limit display breaking smiley faces"),
    Query("rtl-layout", "flipping the interface for a middle eastern script"),
    Query("rate-limit-429", "ecommerce platform throttling us during the overnight import"),
    Query(
        "cdn-cache-purge",
        "visitors seeing outdated stylesheets after a release because of the edge network",
    ),
    Query("git-secret-committed", "accidentally published cloud credentials in the repository"),
    Query("git-lfs-psd", "huge art assets bloating version control"),
    Query("k8s-readiness", "gateway errors for a moment whenever we ship a release"),
    Query("k8s-hpa-not-scaling", "cluster not adding replicas under heavy processor load"),
    Query("react-list-slow", "page hanging when showing thousands of clients in a grid"),
    Query(
        "bundle-size-moment",
        "huge javascript download because of a time formatting library with all languages",
    ),
    Query("cors-preflight", "cross-site update calls refused while reads were ok"),
    Query(
        "session-fixation", "pentest finding that the identifier stayed the same after signing in"
    ),
    Query(
        "password-hash-upgrade", "moving legacy credential digests to a modern algorithm gradually"
    ),
    Query("python-asyncio-blocking", "sync http library freezing the async web framework"),
    Query(
        "celery-duplicate-emails", "onboarding message arriving repeatedly from a background job"
    ),
    Query("sqlite-locked", "embedded engine contention between a scheduled script and the site"),
    Query("mobile-safari-vh", "register call-to-action covered by the url bar on ios"),
    Query("font-loading-cls", "heading moving once the typeface came in, bad page speed score"),
    Query(
        "terraform-state-lock",
        "infrastructure as code tool stuck on a leftover mutex from an aborted session",
    ),
    Query("go-goroutine-leak", "lightweight threads piling up blocked endlessly in the backend"),
    Query("graphql-n-plus-one", "fetching writers for each article separately in the api layer"),
    Query(
        "s3-presigned-expired",
        "large clips to the bucket dying midway because the signed link lapsed",
    ),
)

LEXICAL: Final[tuple[Query, ...]] = (
    Query("zustand-rerender", "useAuthStore"),
    Query("pg-pool-exhausted", "PG_MAX_CONNECTIONS"),
    Query("node-openssl-error", "ERR_OSSL_EVP_UNSUPPORTED"),
    Query("rust-borrow-e0502", "E0502"),
    Query("webpack-alias", "webpack.config.js"),
    Query("k8s-crashloop", "CrashLoopBackOff"),
    Query("pg-deadlock", "40P01"),
    Query("worker-oomkilled", "OOMKilled"),
    Query("renovate-grouping", "renovate.json5"),
    Query("flaky-econnreset", "ECONNRESET"),
    Query("stripe-webhook-signature", "handleStripeWebhook"),
    Query("a11y-error-text", "aria-describedby"),
    Query("css-grid-areas", "grid-template-areas"),
    Query("git-bad-rebase", "ORIG_HEAD"),
    Query("cpp-segfault", "SIGSEGV"),
    Query("request-id-header", "X-Request-Id"),
    Query("mysql-packet", "max_allowed_packet"),
    Query("ci-secrets-fork", "VERCEL_TOKEN"),
)

DISTRACTORS: Final[tuple[tuple[str, str], ...]] = (
    # auth, login, passwords, sessions
    (
        "password reset emails land in spam for gmail users",
        "The sending domain had no DKIM record. I added SPF and DKIM for the mail provider and the reset emails pass now.",
    ),
    (
        "style the login page so the form is centered and the logo sits above it",
        "Wrapped the form in a flex container centred both ways and moved the logo into the card header.",
    ),
    (
        "date picker crashes when you clear the input with backspace",
        "onChange got null and the component called .getTime() on it; it now treats null as no date selected.",
    ),
    (
        "add a show/hide toggle to the password field",
        "Added an eye button that switches the input type between password and text, with an aria-label that follows the state.",
    ),
    (
        "password strength meter says 'weak' for a 30 char passphrase",
        "It only scored character classes. I switched to zxcvbn, which rates long passphrases as strong.",
    ),
    (
        "login page should remember the email address after logout",
        "The email is kept in localStorage when 'remember me' is ticked and prefilled on the next visit.",
    ),
    (
        "add rate limiting to the login endpoint, 5 attempts per minute per ip",
        "Added a sliding-window limiter in redis keyed on ip and username; the sixth attempt gets 429 with Retry-After.",
    ),
    (
        "magic link login emails expire too fast, users on mobile complain",
        "Raised the link lifetime from 10 to 30 minutes and made the link single-use so the longer window stays safe.",
    ),
    (
        "signup form accepts emails with spaces in them",
        "The validator now trims the value and rejects anything the email regex doesn't accept; the server checks too.",
    ),
    (
        "add two-factor auth with TOTP to the account settings",
        "Added enrolment with a QR code from pyotp, verification of the first code, and ten recovery codes shown once.",
    ),
    (
        "the logout button doesn't clear the refresh token cookie",
        "The cookie was set with path=/api/auth and cleared with path=/; both use the same path now.",
    ),
    (
        "write tests for the change-password endpoint",
        "Added tests for wrong current password, weak new password, success, and that other sessions are revoked.",
    ),
    (
        "blank screen after login on firefox only",
        "A regex lookbehind in the redirect helper broke an older Firefox ESR build; I rewrote it without lookbehind.",
    ),
    (
        "our auth middleware returns 500 when the Authorization header has no Bearer prefix",
        "split(' ')[1] was undefined; the middleware now answers 401 for a malformed header.",
    ),
    (
        "how long should session cookies live for an internal admin tool",
        "For an internal tool I'd use an 8 hour idle timeout with a 24 hour absolute limit, renewed on activity.",
    ),
    (
        "add 'sign in with github' next to google on the login page",
        "Added the GitHub provider to the OAuth config and a second button; accounts are linked by verified email.",
    ),
    (
        "users with a plus sign in their email can't log in",
        "The email went through a URL query string unencoded, so + became a space. It is sent in the POST body now.",
    ),
    (
        "refresh token rotation: reuse of an old token should log out all devices",
        "Each refresh token stores its family id; presenting a rotated token revokes the whole family.",
    ),
    (
        "make the password reset link invalid once the password was changed",
        "The reset token now embeds a hash of the current password hash, so it stops verifying after any change.",
    ),
    (
        "api keys for customers: how to store them",
        "Store only a SHA-256 of the key plus a short visible prefix for lookup; show the full key once at creation.",
    ),
    # CSS and layout
    (
        "header should stick to the top while scrolling, but only on desktop",
        "position: sticky; top: 0 inside a min-width media query, with a background so content doesn't show through.",
    ),
    (
        "center a div vertically and horizontally, the usual",
        "display: grid; place-items: center on the parent, with a height set on it.",
    ),
    (
        "the footer links wrap weirdly on small phones",
        "Changed the list to flex-wrap with a gap and let each link take min-content width.",
    ),
    (
        "cards in the product grid have different heights and the buttons don't line up",
        "Made each card a flex column and gave the description flex: 1 so the buttons align at the bottom.",
    ),
    (
        "sidebar overlaps content when the window is around 900px wide",
        "The sidebar was absolutely positioned; I put both in a grid with a fixed first column and a breakpoint.",
    ),
    (
        "text overflows the table cells with long urls",
        "Added overflow-wrap: anywhere to the cells and a max-width on the url column.",
    ),
    (
        "print stylesheet for invoices, hide nav and buttons",
        "Added a print media block hiding nav and buttons, with page-break-inside: avoid on line items.",
    ),
    (
        "the hero image is blurry on retina screens",
        "Served a 2x version through srcset with sizes, so high-density screens get the larger file.",
    ),
    (
        "tailwind classes not applied in production build but fine in dev",
        "The content globs didn't include the components folder, so those classes were purged.",
    ),
    (
        "animate the accordion open and close smoothly",
        "Animated grid-template-rows from 0fr to 1fr, which works without knowing the content height.",
    ),
    (
        "scrollbar appears horizontally on mobile, can't find which element is too wide",
        "A full-bleed banner used 100vw, which includes the scrollbar width; it uses 100% now.",
    ),
    (
        "modal backdrop doesn't cover the fixed header",
        "The header had z-index 1000 and the modal 100; I defined a z-index scale and the modal layer sits above.",
    ),
    (
        "make the dashboard charts responsive",
        "The charts now read their width from a ResizeObserver on the container instead of a fixed 800px.",
    ),
    (
        "tooltip gets cut off at the right edge of the screen",
        "Switched to floating-ui with the flip and shift middleware so it repositions near edges.",
    ),
    (
        "dark mode colors for the charts look washed out",
        "Defined chart colors as CSS variables with a separate dark palette of higher saturation.",
    ),
    (
        "button text isn't vertically centred in safari",
        "The button had a fixed line-height and padding mismatch; inline-flex with align-items: center fixes it.",
    ),
    # databases and migrations
    (
        "alembic: two heads after merging two branches, upgrade fails",
        "Created a merge revision with alembic merge heads, so the history is linear again.",
    ),
    (
        "add a NOT NULL column with a default to a big table without downtime",
        "On Postgres 11+ adding a column with a constant default is instant; I split the NOT NULL backfill into batches otherwise.",
    ),
    (
        "django migration fails: relation already exists",
        "The table was created by hand earlier. I faked the initial migration with --fake-initial.",
    ),
    (
        "rename the orders table to purchases, the ORM model too",
        "Renamed the model and wrote the migration with RenameModel, keeping the foreign keys.",
    ),
    (
        "how do i roll back the last migration in prisma",
        "Prisma migrate has no down migrations; I wrote a new migration reverting the change.",
    ),
    (
        "seed script for local dev with fake users and products",
        "Added a seed command using Faker that creates 50 users and 200 products with a fixed seed.",
    ),
    (
        "postgres query slow with LIKE '%term%' on product names",
        "Added a pg_trgm GIN index on name, which serves the leading-wildcard LIKE.",
    ),
    (
        "mysql: switch a column from latin1 to utf8mb4",
        "ALTER TABLE ... CONVERT TO CHARACTER SET utf8mb4 in a maintenance window, after checking index lengths.",
    ),
    (
        "how to backup the prod postgres every night to s3",
        "A cron job runs pg_dump in custom format, gzips it and uploads to a bucket with 30-day lifecycle rules.",
    ),
    (
        "database connection string should come from env not the settings file",
        "Settings now read DATABASE_URL with a sensible error when missing.",
    ),
    (
        "unique constraint on email should be case-insensitive",
        "Created a unique index on lower(email) and normalise the email on save.",
    ),
    (
        "migration to split the address column into street, city, zip",
        "Added the three columns, backfilled them with a parsing function in batches, then dropped the old column in a later release.",
    ),
    (
        "soft delete for comments instead of removing rows",
        "Added a deleted_at column, a default manager that hides those rows and an admin filter to see them.",
    ),
    (
        "queries count distinct users per day are slow on the events table",
        "Added a daily rollup table updated by a nightly job; the dashboard reads from it.",
    ),
    (
        "sqlalchemy session is closed error in background thread",
        "The thread used the request's session; each job now opens its own session from the factory.",
    ),
    (
        "pgbouncer breaks our prepared statements",
        "In transaction mode prepared statements don't survive; I disabled them in the driver settings.",
    ),
    (
        "postgres autovacuum can't keep up with the jobs table",
        "Lowered the table's autovacuum scale factor and deleted finished jobs in batches.",
    ),
    (
        "need a read replica for analytics queries",
        "Added a replica database alias and a router that sends the reporting models' reads there.",
    ),
    # CI/CD
    (
        "github actions: run tests on python 3.10, 3.11 and 3.12",
        "Added a matrix over python-version with fail-fast off.",
    ),
    (
        "ci lint step fails only on windows runners, line endings",
        "Added a .gitattributes with text=auto eol=lf so checkouts keep LF on Windows.",
    ),
    (
        "cache the pip downloads in gitlab ci",
        "Set PIP_CACHE_DIR inside the project and cached that directory keyed on requirements.txt.",
    ),
    (
        "deploy job should only run on tags",
        "Added an if on startsWith(github.ref, 'refs/tags/') to the deploy job.",
    ),
    (
        "our CI runs take forever because the docker build has no layer cache",
        "Enabled buildx with the gha cache backend, so unchanged layers are reused across runs.",
    ),
    (
        "upload the coverage report as an artifact and show it on the PR",
        "The job uploads coverage.xml and a step posts a summary comment on the pull request.",
    ),
    (
        "nightly workflow that runs the slow e2e tests",
        "Added a scheduled workflow with a cron trigger that runs the e2e suite and notifies the channel on failure.",
    ),
    (
        "block merges to main unless CI passes",
        "Turned on branch protection with the required status checks and up-to-date branches.",
    ),
    (
        "jenkins pipeline: archive the build output",
        "Added archiveArtifacts for dist/** in the post success block.",
    ),
    (
        "CI sometimes runs out of disk space during the build",
        "A step now prunes unused images and removes the preinstalled toolchains we don't use before the build.",
    ),
    (
        "how to pass a secret to a docker build in actions without it ending up in the image",
        "Used BuildKit secret mounts: --secret id=npmrc and RUN --mount=type=secret in the Dockerfile.",
    ),
    (
        "release workflow should bump the version and write the changelog",
        "Added release-please, which opens a release PR with the version bump and changelog from commits.",
    ),
    # docker
    (
        "docker build can't reach the internet behind the corporate proxy",
        "Passed HTTP_PROXY and HTTPS_PROXY as build args; they are predefined args Docker accepts.",
    ),
    (
        "container runs as root, security wants a non-root user",
        "Added a user in the Dockerfile, chowned the app directory and switched with USER.",
    ),
    (
        "docker compose up rebuilds everything every time",
        "COPY . . came before installing dependencies; I copy the lockfile first so the install layer caches.",
    ),
    (
        "hot reload doesn't work in the docker dev setup on mac",
        "File events don't cross the bind mount reliably; I enabled polling in the dev server config.",
    ),
    (
        "how to see why a container exits immediately",
        "docker logs on the exited container and docker inspect for the exit code; here the entrypoint script lacked execute permission.",
    ),
    (
        "the timezone inside the container is UTC, logs should be local time",
        "Set TZ and installed tzdata in the image, though I'd keep logs in UTC and convert when reading.",
    ),
    (
        "docker volume permissions: app can't write to the mounted uploads folder",
        "The host folder belonged to another uid; I matched the container user's uid with a build arg.",
    ),
    (
        "multi-arch image for arm macs and x86 servers",
        "Built with docker buildx for linux/amd64 and linux/arm64 and pushed one manifest list.",
    ),
    (
        "docker desktop uses 12GB of disk",
        "docker system prune -a removed dangling images and build cache, freeing 9 GB.",
    ),
    (
        "healthcheck for the nginx container",
        "Added a HEALTHCHECK with curl against /healthz every 30 seconds.",
    ),
    # rust
    (
        "rust: how to share a hashmap between threads",
        "Wrap it in Arc<Mutex<HashMap>> or use dashmap if contention matters.",
    ),
    (
        "cargo build is really slow, any tips",
        "Switched to the mold linker, split the crate into a workspace and set debug = 1 for dev builds.",
    ),
    ("rust: convert a Vec<String> into a comma separated string", 'vec.join(", ") does it.'),
    (
        "error[E0308] mismatched types expected String found &str",
        "Call .to_string() on the literal or change the parameter to &str.",
    ),
    (
        "rust trait object vs generics for plugin system",
        "Box<dyn Plugin> if the plugins are chosen at runtime; generics when they're known at compile time.",
    ),
    (
        "serde: rename all fields to camelCase in json",
        'Added #[serde(rename_all = "camelCase")] to the struct.',
    ),
    (
        "tokio: spawn task and wait for all of them",
        "Collected JoinHandles in a JoinSet and awaited join_next in a loop.",
    ),
    (
        "clippy says needless_range_loop, what's the idiomatic version",
        "Iterate with .iter().enumerate() instead of indexing by range.",
    ),
    (
        "rust: reading a large file line by line efficiently",
        "BufReader::new(file).lines() streams it; for speed reuse one String with read_line.",
    ),
    (
        "move occurs because value has type Vec which does not implement Copy",
        "The vector was moved into the closure; I cloned it for the closure and kept the original.",
    ),
    # tests and flakiness
    (
        "pytest fixtures: share a database between tests in one module",
        "Made the fixture module-scoped and wrapped each test in a savepoint that rolls back.",
    ),
    (
        "cypress test times out waiting for the checkout button",
        "The button renders after a network call; I intercept the request and wait on its alias.",
    ),
    (
        "jest snapshot tests fail after upgrading react",
        "The markup changed legitimately; I reviewed the diffs and updated the snapshots with -u.",
    ),
    (
        "tests pass individually but fail when run together",
        "One test modified a module-level settings dict; a fixture now restores it after each test.",
    ),
    (
        "mock the current time in jest",
        "jest.useFakeTimers() with setSystemTime for the date, restored in afterEach.",
    ),
    (
        "the e2e suite takes 40 minutes, can we parallelize",
        "Split it into 6 shards in the CI matrix with Playwright's --shard.",
    ),
    (
        "test coverage dropped below the threshold after the refactor",
        "The new helpers had no tests; I added unit tests for them and coverage is back to 86%.",
    ),
    (
        "playwright screenshot tests differ by one pixel between machines",
        "Font rendering differs; the tests run in the official container now and allow a small pixel ratio.",
    ),
    (
        "unit test for the invoice total with discounts and tax",
        "Added parametrised cases for percentage and fixed discounts, rounding and zero tax.",
    ),
    (
        "hypothesis found a failing example in the parser, how do I keep it",
        "Added it as an @example on the property test so it always runs.",
    ),
    (
        "random order test plugin found test pollution",
        "Two tests shared a class-level list; each test builds its own now.",
    ),
    (
        "tests against real stripe sandbox are slow, mock it?",
        "Recorded the sandbox responses with vcrpy and replay them in CI, refreshing the cassettes weekly.",
    ),
    # memory and performance
    (
        "chrome tab uses 2GB after leaving the dashboard open overnight",
        "The polling loop appended every response to a chart series without trimming; it keeps the last 500 points.",
    ),
    (
        "node process memory grows during a big csv export",
        "The export built the whole file in memory; it streams rows to the response now.",
    ),
    (
        "java service heap usage, how to take a heap dump in prod",
        "jcmd <pid> GC.heap_dump to a file, then open it in Eclipse MAT.",
    ),
    (
        "profile why the python script is slow",
        "Ran it under py-spy; most time was in a regex compiled inside a loop, which I hoisted.",
    ),
    (
        "api p99 latency doubled since tuesday",
        "A new feature flag check did a database lookup per request; I cached the flags for 30 seconds.",
    ),
    (
        "page load is slow because of a huge hero video",
        "The video now loads lazily with a poster image and preload=none.",
    ),
    (
        "improve the lighthouse performance score of the landing page",
        "Compressed images to AVIF, deferred the analytics script and inlined critical CSS.",
    ),
    (
        "the search endpoint is slow with many filters",
        "Added a composite index matching the common filter combination and removed an OR that prevented index use.",
    ),
    (
        "angular app change detection is slow on the big form",
        "Switched the form components to OnPush and tracked the list with trackBy.",
    ),
    (
        "python: loading a 5GB csv with pandas runs out of memory",
        "Read it in chunks with dtypes declared, or use polars' lazy scan.",
    ),
    (
        "go service cpu at 100%, how to profile",
        "Enabled net/http/pprof and took a 30 s CPU profile; JSON encoding of a big struct dominated.",
    ),
    (
        "the image gallery stutters when scrolling",
        "Thumbnails were decoded full size; they are resized on the server and use loading=lazy.",
    ),
    # i18n
    (
        "add german translations to the app",
        "Added a de locale file, registered it with the i18n setup and a language switcher.",
    ),
    (
        "dates show in US format for british users",
        "Format with Intl.DateTimeFormat using the user's locale instead of a hardcoded pattern.",
    ),
    (
        "currency formatting: show euros with comma decimals for france",
        "Intl.NumberFormat('fr-FR', { style: 'currency', currency: 'EUR' }).",
    ),
    (
        "extract all hardcoded strings in the react app into translation files",
        "Ran i18next-parser over src and replaced the strings with t() keys.",
    ),
    (
        "translation keys missing show as raw keys in production",
        "Added a fallback language and a CI check that every key exists in all locale files.",
    ),
    (
        "language switcher should remember the choice",
        "The choice is stored in a cookie and read by the middleware that sets the locale.",
    ),
    (
        "sorting names alphabetically is wrong for swedish å ä ö",
        "Use Intl.Collator('sv') for comparison instead of the default sort.",
    ),
    (
        "japanese text breaks the layout of the product cards",
        "Long words without spaces overflowed; I added word-break: keep-all and overflow-wrap.",
    ),
    (
        "translators want context for each string",
        "Added description fields in the message catalog, exported to the translation platform.",
    ),
    (
        "pluralization for english only needs singular and plural right?",
        "For English yes, one and other; other languages need more, so keep using the plural API.",
    ),
    # payments
    (
        "stripe checkout: add apple pay",
        "Apple Pay is enabled in Checkout once the domain is verified in the dashboard.",
    ),
    (
        "refund a payment partially from the admin",
        "Added a refund form that calls the refunds API with the amount and records it on the order.",
    ),
    (
        "subscription renewals fail for cards that need 3D secure",
        "Off-session renewals need the customer to authenticate; we email a link to the hosted invoice page.",
    ),
    (
        "show prices with tax included for EU customers",
        "Prices are stored net; the display adds the VAT rate of the customer's country.",
    ),
    (
        "paypal integration returns currency not supported",
        "The account didn't have the currency enabled; I enabled it and set it on the order.",
    ),
    (
        "send a receipt email after successful payment",
        "The payment_intent.succeeded event now enqueues a receipt email with the order summary.",
    ),
    (
        "coupon codes should be case-insensitive",
        "Codes are normalised to upper case on creation and lookup.",
    ),
    (
        "invoice pdf generation is slow",
        "Moved PDF rendering to a background job and cache the file once generated.",
    ),
    (
        "customers want to update their card without contacting support",
        "Added a link to the Stripe customer portal from the billing page.",
    ),
    (
        "payment form shows the card error in english for all users",
        "Passed the user's locale to Stripe Elements so its messages are localised.",
    ),
    (
        "prorate the charge when a user upgrades mid-cycle",
        "Set proration_behavior to create_prorations on the subscription update.",
    ),
    # caching
    (
        "add redis caching to the expensive stats endpoint",
        "Cached the response for 5 minutes under a key that includes the query parameters.",
    ),
    (
        "cache stampede when the popular key expires",
        "Added a lock so one request recomputes while others serve the stale value briefly.",
    ),
    (
        "browser caches the api responses, users see stale data",
        "API responses now send Cache-Control: no-store.",
    ),
    (
        "memcached vs redis for session storage",
        "Redis, since it can persist and we already run it; memcached would lose sessions on restart.",
    ),
    (
        "http caching headers for static assets",
        "Hashed files get Cache-Control: public, max-age=31536000, immutable.",
    ),
    (
        "redis memory keeps growing",
        "Keys were set without expiry; I added TTLs and set maxmemory-policy to allkeys-lru.",
    ),
    (
        "django cache per view for anonymous users only",
        "Used cache_page with vary on cookie, and skipped it in the view when the user is authenticated.",
    ),
    (
        "service worker serves an old version of the app forever",
        "The service worker now calls skipWaiting and the page reloads when a new one activates.",
    ),
    (
        "cache the results of the geocoding api calls",
        "Stored results in a table keyed on the normalised address with a 30 day expiry.",
    ),
    # git
    (
        "how do i undo the last commit but keep the changes",
        "git reset --soft HEAD~1 keeps them staged.",
    ),
    (
        "merge conflict in package-lock.json, what to do",
        "Take either side, then run npm install to regenerate the lockfile and commit it.",
    ),
    (
        "git says detached HEAD after checking out a tag",
        "That's expected; create a branch with git switch -c if you want to commit there.",
    ),
    (
        "rename a branch locally and on the remote",
        "git branch -m old new, push the new one with -u and delete the old remote branch.",
    ),
    (
        "cherry-pick a fix from main into the release branch",
        "git cherry-pick -x <sha> on the release branch, resolving the one conflict in the changelog.",
    ),
    (
        "accidentally committed to main instead of a feature branch",
        "Created the feature branch at HEAD, then reset main back to origin/main.",
    ),
    (
        "git blame for a line that was moved between files",
        "git blame -C -C follows lines moved or copied across files.",
    ),
    (
        "set up a pre-commit hook that runs the linter",
        "Added pre-commit with the ruff hooks and installed it with pre-commit install.",
    ),
    (
        "clean up local branches that were merged",
        "git branch --merged main | grep -v main | xargs git branch -d.",
    ),
    (
        "git stash pop gave conflicts and now I'm confused",
        "The stash stays in the list after a conflicted pop; resolve, add the files, then drop it.",
    ),
    (
        "how to split one big commit into smaller ones",
        "Interactive rebase, mark it edit, reset HEAD~ and commit the pieces with git add -p.",
    ),
    (
        "submodule shows modified content but I didn't change anything",
        "The submodule had untracked build files; ignore = dirty in .gitmodules hides that.",
    ),
    (
        "sign commits with ssh key",
        "Set gpg.format ssh, user.signingkey to the public key and commit.gpgsign true.",
    ),
    (
        "git clone of the monorepo is slow",
        "A partial clone with --filter=blob:none and a sparse checkout of the needed folders.",
    ),
    # kubernetes
    (
        "kubectl: how to see events for a pod that won't schedule",
        "kubectl describe pod shows the events; here no node had enough memory for the requests.",
    ),
    (
        "pods stuck in ImagePullBackOff after moving to the private registry",
        "The namespace lacked the imagePullSecret; I created it and referenced it in the service account.",
    ),
    (
        "set resource limits for all deployments in the namespace",
        "Added a LimitRange with default requests and limits for containers.",
    ),
    (
        "ingress returns 404 for the new service",
        "The ingress class annotation was missing, so the controller ignored the resource.",
    ),
    (
        "helm upgrade fails with 'another operation is in progress'",
        "A previous upgrade was interrupted; I rolled back to the last good revision.",
    ),
    (
        "configmap changes don't reach the running pods",
        "Pods read it at start; the deployment now has a checksum annotation so a change rolls them.",
    ),
    (
        "cron job in kubernetes runs twice sometimes",
        "Set concurrencyPolicy: Forbid and made the job idempotent.",
    ),
    (
        "persistent volume claim stuck in pending",
        "No storage class was set as default; I named the class in the claim.",
    ),
    (
        "how to give a pod access to s3 without keys",
        "Used IRSA: a service account annotated with an IAM role.",
    ),
    (
        "node disk pressure evicting pods",
        "Container logs filled the disk; I set log rotation in the kubelet config.",
    ),
    (
        "canary deployments in kubernetes",
        "Argo Rollouts shifts traffic in steps and checks the error rate before going on.",
    ),
    (
        "pod can't resolve external dns names",
        "CoreDNS forwarded to a resolver that was down; I pointed it at the VPC resolver.",
    ),
    # web/api misc
    (
        "add pagination to the /products endpoint",
        "Cursor pagination on (created_at, id) with a limit parameter and a next cursor in the response.",
    ),
    (
        "openapi docs don't show the request body for the upload endpoint",
        "Declared the multipart schema on the route so the generator documents the file field.",
    ),
    (
        "websocket connection drops every 60 seconds behind nginx",
        "nginx's proxy_read_timeout closed idle connections; I raised it and added a ping every 30 seconds.",
    ),
    (
        "return 404 instead of 500 when the product id doesn't exist",
        "The handler now catches DoesNotExist and answers 404 with a JSON error.",
    ),
    (
        "validate the request body with pydantic in fastapi",
        "Declared a model for the body; fastapi answers 422 with the field errors.",
    ),
    (
        "graphql schema: add a field for the author's avatar url",
        "Added avatarUrl to the Author type with a resolver building the CDN url.",
    ),
    (
        "file upload endpoint accepts any file type",
        "It now checks the magic bytes against an allowlist of image types, not just the extension.",
    ),
    (
        "api versioning: v1 and v2 side by side",
        "Mounted the two routers under /v1 and /v2 sharing the services layer.",
    ),
    (
        "structured json logs for the api",
        "Configured structlog with a JSON renderer and added request method, path and status.",
    ),
    (
        "health check endpoint should check the database too",
        "/healthz now runs SELECT 1 with a short timeout and reports each dependency.",
    ),
    (
        "send slack notification when a deploy finishes",
        "The deploy script posts to the incoming webhook with the version and who deployed.",
    ),
    (
        "webhooks from github: verify the signature",
        "Compute HMAC SHA-256 of the raw body with the secret and compare with hmac.compare_digest.",
    ),
    (
        "stripe webhook events arrive out of order",
        "The handler refetches the object from the API instead of trusting the event payload order.",
    ),
    (
        "retry failed outgoing webhooks with backoff",
        "Failed deliveries go to a queue with exponential backoff up to 24 hours.",
    ),
    (
        "email templates look broken in outlook",
        "Rewrote the layout with tables and inline styles, which Outlook's renderer needs.",
    ),
    # accessibility
    (
        "add skip to content link",
        "Added a visually hidden link as the first focusable element that shows on focus.",
    ),
    (
        "color contrast of the grey placeholder text fails wcag",
        "Darkened the placeholder to #6b6b6b for a 4.6:1 ratio.",
    ),
    (
        "images need alt text, a lot of them",
        "Added alt text to content images and empty alt to decorative ones; a lint rule enforces it.",
    ),
    (
        "icon-only buttons have no accessible name",
        "Added aria-label to each icon button and hid the svg with aria-hidden.",
    ),
    (
        "keyboard users can't open the dropdown menu",
        "The trigger was a div; it is a button now with arrow key handling in the menu.",
    ),
    (
        "respect prefers-reduced-motion for the animations",
        "Wrapped the animations in a media query that disables them for reduced motion.",
    ),
    (
        "the carousel auto-advances and can't be paused",
        "Added a pause button and auto-advance stops on focus or hover.",
    ),
    (
        "headings skip from h1 to h4 on the pricing page",
        "Fixed the heading levels and moved visual sizing into classes.",
    ),
    ("run axe in our CI", "Added axe checks to the Playwright tests for the main pages."),
    # misc frontend/react
    (
        "react useEffect runs twice in dev",
        "That's StrictMode double-invoking effects in development; the effect now cleans up properly.",
    ),
    (
        "redux store is getting huge, should we move to something lighter",
        "For this app's size zustand covers it; I migrated the cart slice as a start.",
    ),
    (
        "form state resets when switching tabs in the settings page",
        "The tab panels unmounted; the form state moved up to the parent.",
    ),
    (
        "useContext value change re-renders the whole tree",
        "Split the context into state and dispatch and memoized the value.",
    ),
    (
        "next.js image component shows a layout shift",
        "Gave the images width and height so the space is reserved.",
    ),
    (
        "vite dev server is slow to start with many dependencies",
        "Added the heavy dependencies to optimizeDeps.include so they're prebundled once.",
    ),
    (
        "typescript error: object is possibly undefined",
        "Narrowed with an early return, which is clearer than the non-null assertion.",
    ),
    (
        "eslint complains about missing dependencies in useEffect",
        "Added the missing dependency and wrapped the callback in useCallback.",
    ),
    (
        "convert the class components to hooks",
        "Converted the three components; state became useState and lifecycle methods became effects.",
    ),
    (
        "the search box should debounce requests",
        "Debounced the input by 300 ms and cancel the previous request with AbortController.",
    ),
    (
        "infinite scroll loads the same page twice",
        "The observer fired while a request was in flight; a loading flag guards it.",
    ),
    (
        "storybook for our button and input components",
        "Set up Storybook with stories for each variant and the a11y addon.",
    ),
    # security misc
    (
        "content security policy blocks our inline scripts",
        "Moved inline scripts to files and added a nonce for the one that must stay inline.",
    ),
    (
        "sql injection risk in the search endpoint?",
        "Yes, it formatted the query string; it uses bound parameters now.",
    ),
    (
        "dependabot flagged a vulnerable lodash version",
        "Upgraded lodash and the package that pinned the old version.",
    ),
    (
        "xss in the comment preview",
        "The preview used innerHTML; it sanitizes with DOMPurify before rendering markdown output.",
    ),
    (
        "rotate the database password without downtime",
        "Created a second user, switched the app to it, then changed the old user's password.",
    ),
    (
        "store secrets in vault instead of env files",
        "The app reads secrets from Vault at start with a Kubernetes auth role.",
    ),
    (
        "scan the docker images for vulnerabilities in CI",
        "Added a Trivy step that fails on high severity issues.",
    ),
    # infra
    (
        "terraform plan wants to recreate the database",
        "A changed engine version forced replacement; I set it to match and used lifecycle ignore_changes.",
    ),
    (
        "import an existing s3 bucket into terraform",
        "terraform import aws_s3_bucket.assets <name>, then wrote the config until plan was clean.",
    ),
    (
        "terraform modules for staging and prod with different sizes",
        "One module with variables for instance sizes and separate tfvars per environment.",
    ),
    (
        "nginx: redirect http to https",
        "Added a server block on port 80 returning 301 to the https url.",
    ),
    (
        "ssl certificate expired on the staging domain",
        "Certbot's renewal timer wasn't enabled; I renewed and enabled it.",
    ),
    (
        "cloudfront returns 403 for the spa routes",
        "Mapped 403 and 404 to /index.html with a 200 in the error responses.",
    ),
    (
        "set up log retention for cloudwatch",
        "Set 30-day retention on each log group via terraform.",
    ),
    (
        "s3 bucket should not be public",
        "Turned on block public access and serve files through signed CloudFront URLs.",
    ),
    (
        "lambda cold starts are slow",
        "Trimmed the package, moved imports out of the handler and enabled provisioned concurrency for the hot path.",
    ),
    (
        "autoscaling group keeps replacing healthy instances",
        "The health check grace period was shorter than the app's boot time; I raised it.",
    ),
    # go / python / misc languages
    (
        "go: context deadline exceeded when calling the payments api",
        "The client timeout was 2 seconds; the provider's p99 is 3, so I raised it and added a retry.",
    ),
    (
        "go: how to read a json body into a struct",
        "json.NewDecoder(r.Body).Decode(&v), with DisallowUnknownFields if you want it strict.",
    ),
    (
        "golang race detector reports a data race on the config map",
        "Guarded the map with a RWMutex and copy it on reload.",
    ),
    (
        "python: asyncio.gather swallows exceptions?",
        "It raises the first one unless return_exceptions=True; then check each result.",
    ),
    (
        "python packaging: move from setup.py to pyproject.toml",
        "Moved the metadata into pyproject.toml with setuptools as the build backend.",
    ),
    (
        "mypy complains about untyped third party library",
        "Installed its stubs package, and ignore_missing_imports for the one without stubs.",
    ),
    (
        "python: datetime comparison error offset-naive and offset-aware",
        "Made all datetimes timezone-aware in UTC at the boundary.",
    ),
    (
        "celery beat runs the task at the wrong hour",
        "Beat used UTC; I set the timezone setting to the local zone.",
    ),
    (
        "celery worker stops consuming after a while",
        "A task hung without a timeout; I set soft and hard time limits.",
    ),
    (
        "flask app: move config to environment variables",
        "Config class reads from os.environ with defaults for development.",
    ),
    (
        "java: NullPointerException in the order mapper",
        "The shipping address can be null for pickups; the mapper handles it.",
    ),
    (
        "kotlin coroutine cancelled exception in the logs",
        "The scope was cancelled on screen exit; that's normal and now filtered out of the error logs.",
    ),
    (
        "c++: undefined reference when linking the tests",
        "The test target didn't link the library; I added it to target_link_libraries.",
    ),
    (
        "c: valgrind reports definitely lost bytes in the config loader",
        "The loader returned early without freeing the buffer on parse errors.",
    ),
    (
        "swift: app crashes on launch on ios 15 only",
        "A SwiftUI API from iOS 16 was used without an availability check.",
    ),
    # misc time / text / files
    (
        "cron job runs at 2am server time but that's the busiest time in asia",
        "Moved the schedule to 18:00 UTC, the quietest hour across regions.",
    ),
    (
        "parse dates like '03/04/2024' unambiguously",
        "We take ISO 8601 at the API and ask for the format in the import UI.",
    ),
    (
        "csv export opens with garbled characters in excel",
        "Excel needs a UTF-8 BOM; the export writes one.",
    ),
    (
        "slugify titles with accents",
        "Normalise to NFKD and drop combining marks before replacing spaces with dashes.",
    ),
    (
        "count words in a text with chinese and english",
        "Used Intl.Segmenter with granularity word and counted isWordLike segments.",
    ),
    (
        "truncate long product titles with an ellipsis in css",
        "text-overflow: ellipsis with overflow hidden and white-space nowrap, or line-clamp for two lines.",
    ),
    ("show relative times like '3 hours ago'", "Intl.RelativeTimeFormat with the user's locale."),
    (
        "store user birthdays without timezone problems",
        "Stored as a plain date column, not a timestamp.",
    ),
    (
        "scheduled reports go out twice on daylight saving day",
        "The scheduler ran in local time; it runs in UTC now and converts for display.",
    ),
    (
        "large file uploads fail through nginx with 413",
        "Raised client_max_body_size for the upload location.",
    ),
    (
        "video transcoding job takes hours",
        "Moved it to a queue with GPU workers and transcodes to fewer renditions.",
    ),
    (
        "generate thumbnails for uploaded pdfs",
        "Render the first page with pdftoppm in a worker and store a webp.",
    ),
    (
        "s3 upload from the browser with cors error",
        "Added a CORS rule on the bucket allowing PUT from our origin.",
    ),
    (
        "download link to a private s3 file",
        "Generate a presigned GET URL valid for 5 minutes when the user clicks.",
    ),
    # more near misses
    (
        "login page crashes on safari when autofill fills the password",
        "Autofill didn't fire input events; the form reads the values on submit instead.",
    ),
    (
        "empty search query returns a 500",
        "The handler now returns an empty result list for a blank query.",
    ),
    (
        "the settings window doesn't remember its size in the electron app",
        "Saved the bounds on close with electron-store and restore them on open.",
    ),
    (
        "heap snapshot in chrome devtools, how to read retainers",
        "Select an object and look at the retainers panel from the top; the shortest path shows what keeps it.",
    ),
    (
        "our redis cache hit rate is only 20%",
        "Keys included a timestamp, so nothing was shared; keys are now built from stable parameters.",
    ),
    (
        "product price should show with two decimals always",
        "Format with minimumFractionDigits: 2 in the price component.",
    ),
    (
        "force push to my own feature branch after rebase is fine right?",
        "Yes, on your own branch; use --force-with-lease to avoid clobbering anything unexpected.",
    ),
    (
        "kubectl logs of a job that already finished",
        "The pods stay while ttlSecondsAfterFinished allows; kubectl logs job/<name> reads them.",
    ),
    (
        "django admin list page: add search and filters",
        "Added search_fields and list_filter to the ModelAdmin.",
    ),
    (
        "the orders export takes minutes, can it be faster",
        "It used the ORM row by row; a COPY to CSV from the query takes seconds.",
    ),
    (
        "dialog closes when clicking inside it on mobile",
        "The click on the backdrop handler also caught touches inside; it checks the event target now.",
    ),
    (
        "zustand store persist to localStorage",
        "Wrapped the store with the persist middleware and a version for migrations.",
    ),
    (
        "connection pool settings for sqlalchemy with async",
        "pool_size 5, max_overflow 10 and pool_pre_ping to drop dead connections.",
    ),
    (
        "node 16 reached end of life, upgrade plan",
        "Upgrade to node 20 LTS: update the engines field, the CI matrix and the docker base image.",
    ),
    (
        "webpack bundle analyzer setup",
        "Added the analyzer plugin behind an ANALYZE environment variable.",
    ),
    (
        "postgres: find the queries that lock the most",
        "Query pg_locks joined with pg_stat_activity to see who blocks whom.",
    ),
    (
        "kubernetes pod memory limit vs request explained",
        "The request is what the scheduler reserves; the limit is where the kernel kills the container.",
    ),
    (
        "renovate pr fails because the lockfile is out of date",
        "Enabled lockFileMaintenance and the post-upgrade task that regenerates it.",
    ),
    (
        "mock server for frontend development",
        "Set up MSW handlers for the main endpoints so the frontend runs without the API.",
    ),
    (
        "stripe test mode card numbers for declines",
        "4000 0000 0000 0002 declines generically; there are specific numbers for insufficient funds.",
    ),
    (
        "form validation messages should be translated",
        "Validation messages come from the i18n catalog keyed by the rule name.",
    ),
    (
        "grid layout with equal columns that wrap",
        "repeat(auto-fill, minmax(220px, 1fr)) gives equal columns that wrap.",
    ),
    (
        "git rebase onto the updated main",
        "git fetch, then git rebase origin/main on the feature branch, resolving conflicts as they come.",
    ),
    (
        "segfault in the python extension module",
        "The C extension dropped a reference it didn't own; ran it under gdb to find the decref.",
    ),
    (
        "add request logging middleware with timing",
        "Middleware measures the duration and logs method, path, status and milliseconds.",
    ),
    (
        "mysql slow query log setup",
        "Enabled slow_query_log with long_query_time of 1 second in the parameter group.",
    ),
    (
        "preview deployments for every pull request",
        "Connected the repo to the hosting provider, which builds each PR and comments the URL.",
    ),
)

# Where the sessions of :func:`write_eval_home` run: (cwd, branch).
_PROJECTS: Final = (
    ("/home/dev/storefront", "main"),
    ("/home/dev/billing-service", "main"),
    ("/home/dev/platform-infra", "main"),
    ("/home/dev/desktop-client", "develop"),
    ("/home/dev/mobile-web", "feature/checkout-v2"),
    ("/home/dev/analytics", "main"),
)
SESSIONS: Final = 40
_START: Final = datetime(2026, 4, 6, 8, tzinfo=UTC)


def write_eval_home(home: Path, *, seed: int = 11) -> dict[str, EvalEvent]:
    """Write a Claude Code home under ``home``: the generic synthetic sessions of four
    agents (:func:`fixtures.synth.generate_demo_home`), then :data:`TARGETS` and
    :data:`DISTRACTORS` shuffled (seeded by ``seed``) over :data:`SESSIONS` sessions of
    the projects of ``_PROJECTS``, each prompt followed by its reply. Deterministic for
    the same seed. Returns where each target went, by target id (the session id is the
    transcript's ``sessionId``, which the import keeps as the session's id)."""
    from fixtures.synth import generate_demo_home
    from fixtures.synth.claude_content import HAIKU, OPUS, SONNET, VERSIONS
    from fixtures.synth.claude_records import RecordBuilder, Thread
    from fixtures.synth.claude_turns import encode_cwd
    from fixtures.synth.writer import epoch_ms

    generate_demo_home(home, seed=seed)
    rng = random.Random(seed)
    turns: list[tuple[str | None, str, str]] = [(t.id, t.prompt, t.reply) for t in TARGETS]
    turns += [(None, prompt, reply) for prompt, reply in DISTRACTORS]
    rng.shuffle(turns)
    # SESSIONS - 1 cut points among the turns: sessions of uneven length, none empty.
    cuts = sorted(rng.sample(range(1, len(turns)), SESSIONS - 1))
    bounds = list(zip([0, *cuts], [*cuts, len(turns)], strict=True))
    placed: dict[str, EvalEvent] = {}
    with RecordBuilder(home, rng, 0) as builder:
        clock = epoch_ms(_START)
        for number, (begin, end) in enumerate(bounds):
            cwd, branch = _PROJECTS[rng.randrange(len(_PROJECTS))]
            session_id = builder.uuid4()
            path = builder.projects_dir / encode_cwd(cwd) / f"{session_id}.jsonl"
            if path.exists():
                raise FileExistsError(path)
            clock += rng.randint(3, 30) * 3_600_000
            model = (SONNET, OPUS, SONNET, HAIKU)[number % 4]
            th = Thread(
                out=builder.jsonl(path),
                session_id=session_id,
                cwd=cwd,
                branch=branch,
                version=VERSIONS[number % len(VERSIONS)],
                slug=builder.slug(),
                model=model,
                cache_mode="1h" if model == OPUS else "5m",
                clock=clock,
            )
            builder.meta(th, {"type": "mode", "mode": "normal", "sessionId": session_id})
            for target, prompt, reply in turns[begin:end]:
                th.clock += rng.randint(60_000, 900_000)
                builder.user_text(th, prompt, prompt_id=builder.uuid4())
                th.fresh += len(prompt) // 4 + 8
                builder.reply(th, [{"type": "text", "text": reply}], "end_turn")
                if target is not None:
                    placed[target] = EvalEvent(session_id, prompt, reply)
            clock = th.clock
    return placed
