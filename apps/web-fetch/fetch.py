# SPDX-License-Identifier: MIT
"""web-fetch - GET a URL through berth's egress broker.

berth sets HTTP_PROXY/HTTPS_PROXY to its broker's listener on the sandbox's
own loopback; the broker lets through only the hosts berth.yml declares.
The app does not check hosts itself: the broker does, outside the sandbox.
"""

import os
import urllib.error
import urllib.request

import berth_app

LIMIT = 256 * 1024

app = berth_app.App()

# Every request goes to the broker, whatever NO_PROXY says (it names only the
# sandbox's own loopback, where nothing else listens; urllib would otherwise
# try such hosts directly, which Landlock refuses).
os.environ.pop("NO_PROXY", None)
os.environ.pop("no_proxy", None)
_proxy = {k: os.environ[v] for k, v in (("http", "HTTP_PROXY"), ("https", "HTTPS_PROXY")) if v in os.environ}
_opener = urllib.request.build_opener(urllib.request.ProxyHandler(_proxy))


@app.export("fetch_text")
def fetch_text(url, timeout_ms=20000):
    if not (url.startswith("http://") or url.startswith("https://")):
        raise berth_app.AppError("only http and https URLs are fetched")
    if not isinstance(timeout_ms, int) or not 1 <= timeout_ms <= 120000:
        raise berth_app.InvalidParams("$.timeout_ms", "expected 1 to 120000")
    try:
        resp = _opener.open(urllib.request.Request(url, headers={"User-Agent": "berth-web-fetch/0.1"}),
                            timeout=timeout_ms / 1000)
    except urllib.error.HTTPError as e:  # an answer, e.g. the broker's 403
        resp = e
    except urllib.error.URLError as e:
        raise berth_app.AppError("fetch failed: %s" % (e.reason,))
    except OSError as e:
        raise berth_app.os_error(e, "connect", url)
    body = resp.read(LIMIT + 1)
    charset = resp.headers.get_content_charset() or "utf-8"
    return {
        "status": resp.status,
        "headers": {k.lower(): v for k, v in resp.headers.items()},
        "text": body[:LIMIT].decode(charset, errors="replace"),
        "truncated": len(body) > LIMIT,
    }


app.run()
