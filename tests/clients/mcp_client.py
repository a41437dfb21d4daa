"""The official MCP Python SDK (PyPI `mcp`) as a client of Boardsmith's MCP server.

Run by mcp.test.mjs against a real server: streamable HTTP at MCP_URL with the server token
MCP_TOKEN (and a read-scoped API key MCP_READ_KEY), and stdio through `BOARDSMITH_BIN mcp` over
a data directory of its own (MCP_STDIO_DATA). `python mcp_client.py create TITLE` instead makes
one dashboard over HTTP and prints its id (the browser test watches the web app show it).
"""

import asyncio
import json
import os
import sys
import tempfile
import unittest
import warnings

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated

URL = os.environ.get("MCP_URL", "")
TOKEN = os.environ.get("MCP_TOKEN", "")

BUILDER = """return {
  title: %s,
  layout: { columns: 2 },
  panels: [{
    id: 'gold-kline', title: 'Gold daily', type: 'candlestick', renderer: 'lightweight-charts',
    code: "return await sdk.market.getKline({ symbol: 'XAUUSD', timeframe: '1D', limit: 30 });",
  }],
};"""

ADD_PANEL = """async (state) => {
  state.panels.push({
    id: 'gold-news', title: 'Gold news', type: 'feed', renderer: 'custom',
    code: "return await sdk.news.searchNews({ query: 'gold', limit: 5 });",
  });
  return state;
}"""

BROKEN = """return {
  title: 'Broken desk',
  layout: { columns: 2 },
  panels: [{
    id: 'bad', title: 'Bad', type: 'candlestick', renderer: 'lightweight-charts',
    code: "return await sdk.market.getKline({ symbol: 'XAUUSD', timeframe: 'weekly-ish' });",
  }],
};"""


def http_client(credential=TOKEN, **headers):
    if credential:
        headers["Authorization"] = f"Bearer {credential}"
    return streamable_http_client(URL, http_client=httpx2.AsyncClient(headers=headers))


def connect(credential=TOKEN, **kwargs):
    return Client(http_client(credential), **kwargs)


async def execute(client, title):
    r = await client.call_tool("execute", {"code": BUILDER % json.dumps(title)})
    assert not r.is_error, r.content
    return r.structured_content["dashboard_id"]


async def error_of(request):
    """The MCPError `request` raised, or None when it succeeded."""
    try:
        await request
    except MCPError as e:
        return e
    return None


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 60))


class OverHttp(unittest.TestCase):
    def test_tools_are_listed_with_honest_annotations_and_output_schemas(self):
        async def go():
            async with connect() as c:
                self.assertEqual(c.server_info.name, "boardsmith")
                return {t.name: t for t in (await c.list_tools()).tools}

        tools = run(go())
        self.assertEqual(sorted(tools), ["execute", "get_state", "mutate", "search"])
        self.assertTrue(tools["search"].annotations.read_only_hint)
        self.assertTrue(tools["get_state"].annotations.read_only_hint)
        self.assertFalse(tools["execute"].annotations.read_only_hint)
        self.assertFalse(tools["mutate"].annotations.read_only_hint)
        self.assertTrue(tools["mutate"].annotations.destructive_hint, "mutate can delete")
        for t in tools.values():
            self.assertEqual(t.output_schema["type"], "object", t.name)
            self.assertIn("code" if t.name != "get_state" else "dashboard_id", t.input_schema["properties"])
        self.assertIn("validation", tools["execute"].output_schema["properties"])

    def test_search_execute_get_state_mutate_and_the_resource(self):
        async def go():
            async with connect() as c:
                found = await c.call_tool(
                    "search", {"code": "return spec.find('gold', 3).map(m => m.source + '.' + m.method)"}
                )
                dashboard = await execute(c, "MCP gold")
                state = await c.call_tool("get_state", {"dashboard_id": dashboard})
                changed = await c.call_tool("mutate", {"code": ADD_PANEL, "dashboard_id": dashboard})
                full = await c.call_tool("get_state", {"dashboard_id": dashboard, "detail_level": "full"})
                read = await c.read_resource(f"boardsmith://dashboards/{dashboard}")
                listed = await c.list_resources()
                return found, dashboard, state, changed, full, read, listed

        found, dashboard, state, changed, full, read, listed = run(go())
        self.assertFalse(found.is_error)
        self.assertTrue(any("kline" in r.lower() for r in found.structured_content["results"]), found)
        # The same JSON as text, for clients that read content only.
        self.assertEqual(json.loads(found.content[0].text), found.structured_content)
        self.assertEqual(state.structured_content["dashboard_id"], dashboard)
        self.assertEqual(state.structured_content["state"]["title"], "MCP gold")
        kinds = [c["type"] for c in changed.structured_content["changes"]]
        self.assertIn("added_panel", kinds)
        self.assertTrue(changed.structured_content["validation"]["allOk"], changed.structured_content)
        panels = [p["id"] for p in full.structured_content["state"]["panels"]]
        self.assertEqual(panels, ["gold-kline", "gold-news"])
        body = json.loads(read.contents[0].text)
        self.assertEqual((body["id"], body["version"]), (dashboard, 2))
        self.assertEqual(read.contents[0].mime_type, "application/json")
        uris = {r.uri for r in listed.resources}
        self.assertIn(f"boardsmith://dashboards/{dashboard}", uris)
        self.assertIn("boardsmith://dashboards", uris)
        self.assertTrue(any(u.startswith("boardsmith://sources/") for u in uris), uris)

    def test_a_callers_mistake_is_a_tool_error_that_names_the_field(self):
        async def go():
            async with connect() as c:
                misspelt = await c.call_tool("mutate", {"code": "async (s) => s", "dashboardId": "x"})
                missing = await c.call_tool("get_state", {"dashboard_id": "db_does_not_exist"})
                unknown = await error_of(c.call_tool("drop_everything", {}))
                absent = await error_of(c.read_resource("boardsmith://dashboards/db_does_not_exist"))
                return misspelt, missing, unknown, absent

        misspelt, missing, unknown, absent = run(go())
        self.assertTrue(misspelt.is_error)
        self.assertIn('unknown field "dashboardId"', misspelt.content[0].text)
        self.assertTrue(missing.is_error)
        self.assertIn("dashboard_id", missing.content[0].text)
        self.assertIsNotNone(unknown, "an unknown tool is a protocol error")
        self.assertIn("unknown tool", str(unknown))
        self.assertIsNotNone(absent)
        self.assertIn("no resource", str(absent))

    def test_listen_gets_the_dashboards_updates(self):
        async def go():
            async with connect() as c, connect() as writer:
                dashboard = await execute(writer, "Watched")
                uri = f"boardsmith://dashboards/{dashboard}"
                async with c.listen(resource_subscriptions=[uri]) as sub:
                    await writer.call_tool("mutate", {"code": ADD_PANEL, "dashboard_id": dashboard})
                    async for event in sub:
                        if isinstance(event, ResourceUpdated):
                            return uri, event.uri

        uri, got = run(go())
        self.assertEqual(got, uri)

    def test_an_editor_reads_nothing_of_anothers_private_dashboard(self):
        async def go():
            async with connect() as admin, connect(os.environ["MCP_ANN_KEY"]) as ann:
                private = await execute(admin, "Admin's private")
                uri = f"boardsmith://dashboards/{private}"
                listed = json.loads((await ann.read_resource("boardsmith://dashboards")).contents[0].text)
                resources = [r.uri for r in (await ann.list_resources()).resources]
                read = await error_of(ann.read_resource(uri))
                state = await ann.call_tool("get_state", {"dashboard_id": private})
                return private, uri, listed, resources, read, state

        private, uri, listed, resources, read, state = run(go())
        self.assertNotIn(private, json.dumps(listed))
        self.assertNotIn(uri, [str(r) for r in resources])
        self.assertIsNotNone(read, "reading another's private dashboard is refused")
        self.assertTrue(state.is_error, state)
        self.assertIn("not found", state.content[0].text)

    def test_nothing_is_heard_of_a_dashboard_the_caller_may_not_see(self):
        """Ann's key (an editor) listens to the admin's private dashboard and to her own; the
        admin changes both: she hears of hers only."""
        async def go():
            async with connect() as admin, connect(os.environ["MCP_ANN_KEY"]) as ann:
                private = await execute(admin, "Admin's own")
                hers = await execute(ann, "Ann's own")
                uris = [f"boardsmith://dashboards/{d}" for d in (private, hers)]
                heard = []
                async with ann.listen(resource_subscriptions=uris) as sub:
                    await admin.call_tool("mutate", {"code": ADD_PANEL, "dashboard_id": private})
                    await admin.call_tool("mutate", {"code": ADD_PANEL, "dashboard_id": hers})
                    async for event in sub:
                        if isinstance(event, ResourceUpdated):
                            heard.append(event.uri)
                            if event.uri == uris[1]:
                                break
                return uris, heard

        uris, heard = run(go())
        self.assertEqual(heard, [uris[1]], "the admin's private dashboard changed first, unheard")

    def test_a_pre_2026_session_subscribes_and_is_notified(self):
        notes = []

        async def on_message(message):
            notes.append(message)

        async def go():
            async with connect() as writer:
                dashboard = await execute(writer, "Legacy watched")
                uri = f"boardsmith://dashboards/{dashboard}"
                async with connect(mode="legacy", message_handler=on_message) as c:
                    self.assertNotEqual(c.protocol_version, "2026-07-28")
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        await c.subscribe_resource(uri)
                    await writer.call_tool("mutate", {"code": ADD_PANEL, "dashboard_id": dashboard})
                    for _ in range(100):
                        if any(uri in repr(n) for n in notes):
                            break
                        await asyncio.sleep(0.1)
                return uri

        uri = run(go())
        updated = [n for n in notes if "resources/updated" in repr(n) or "ResourceUpdated" in repr(n)]
        self.assertTrue(any(uri in repr(n) for n in updated), notes)

    def test_prompts_build_and_fix_with_the_failing_panels_filled_in(self):
        async def go():
            async with connect() as c:
                prompts = await c.list_prompts()
                r = await c.call_tool("execute", {"code": BROKEN})
                assert not r.structured_content.get("error"), r.structured_content
                dashboard = r.structured_content["dashboard_id"]
                fix = await c.get_prompt("fix_dashboard", {"dashboard_id": dashboard})
                build = await c.get_prompt("build_dashboard", {"topic": "copper"})
                missing = await error_of(c.get_prompt("build_dashboard", {}))
                return prompts, r, dashboard, fix, build, missing

        prompts, r, dashboard, fix, build, missing = run(go())
        self.assertEqual(sorted(p.name for p in prompts.prompts), ["build_dashboard", "fix_dashboard"])
        self.assertFalse(r.structured_content["validation"]["allOk"], r.structured_content)
        text = fix.messages[0].content.text
        self.assertIn(dashboard, text)
        self.assertIn("Panel `bad`", text)
        self.assertIn("weekly-ish", text, "the panel's code is quoted")
        self.assertIn("copper", build.messages[0].content.text)
        self.assertIsNotNone(missing)
        self.assertIn("topic", str(missing))

    def test_a_read_scoped_key_gets_the_read_tools_only(self):
        async def go():
            async with connect(os.environ["MCP_READ_KEY"]) as c:
                names = sorted(t.name for t in (await c.list_tools()).tools)
                state = await c.read_resource("boardsmith://dashboards")
                refused = await error_of(c.call_tool("execute", {"code": BUILDER % '"nope"'}))
                return names, state, refused

        names, state, refused = run(go())
        self.assertEqual(names, ["get_state", "search"])
        self.assertIn("dashboards", json.loads(state.contents[0].text))
        self.assertIsNotNone(refused)
        self.assertIn("write", str(refused))

    def test_no_credential_is_401_and_a_foreign_origin_is_403(self):
        init = {
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "probe", "version": "1"}},
        }
        accept = {"Accept": "application/json, text/event-stream"}

        async def go():
            async with httpx2.AsyncClient() as h:
                anonymous = await h.post(URL, json=init, headers=accept)
                foreign = await h.post(URL, json=init, headers={
                    **accept, "Authorization": f"Bearer {TOKEN}", "Origin": "https://evil.example"})
                ours = await h.post(URL, json=init, headers={**accept, "Authorization": f"Bearer {TOKEN}"})
                return anonymous, foreign, ours

        anonymous, foreign, ours = run(go())
        self.assertEqual(anonymous.status_code, 401, anonymous.text)
        self.assertEqual(foreign.status_code, 403, foreign.text)
        self.assertIn("Origin", foreign.text)
        self.assertEqual(ours.status_code, 200, ours.text)


def stdio(*args):
    return Client(StdioServerParameters(
        command=os.environ["BOARDSMITH_BIN"], args=["mcp", *args],
        env={"BOARDSMITH_DATA": os.environ["MCP_STDIO_DATA"], "BOARDSMITH_OFFLINE": "1",
             "BOARDSMITH_WORKERS": "1", "RUST_LOG": "warn", "PATH": os.environ.get("PATH", "")},
    ))


class OverStdio(unittest.TestCase):
    def test_read_only_exposes_search_and_get_state(self):
        async def go():
            async with stdio("--read-only") as c:
                names = sorted(t.name for t in (await c.list_tools()).tools)
                listed = json.loads((await c.read_resource("boardsmith://dashboards")).contents[0].text)
                refused = await error_of(c.call_tool("mutate", {"code": "async (s) => null"}))
                return names, listed, refused

        names, listed, refused = run(go())
        self.assertEqual(names, ["get_state", "search"])
        self.assertTrue(listed["dashboards"], "the templates of a new data directory are there")
        self.assertIn("read-only", str(refused))

    def test_writes_over_stdio_are_kept(self):
        async def go():
            async with stdio() as c:
                dashboard = await execute(c, "From the desktop")
            # A new process over the same data directory sees it.
            async with stdio("--read-only") as c:
                r = await c.call_tool("get_state", {"dashboard_id": dashboard})
            return r

        r = run(go())
        self.assertFalse(r.is_error, r.content)
        self.assertEqual(r.structured_content["state"]["title"], "From the desktop")


if __name__ == "__main__":
    if sys.argv[1:2] == ["create"]:
        async def create():
            async with connect() as c:
                print(await execute(c, sys.argv[2]))
        run(create())
    else:
        if not os.environ.get("MCP_STDIO_DATA"):
            os.environ["MCP_STDIO_DATA"] = tempfile.mkdtemp(prefix="boardsmith-mcp-")
        unittest.main(verbosity=2)
