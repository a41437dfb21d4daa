"""The official OpenAI Python client (PyPI `openai`) against Boardsmith's /v1.

Run by openai.test.mjs with OPENAI_BASE_URL and OPENAI_API_KEY pointing at a real server whose
only provider is the scripted mock model of script.mjs.
"""

import json
import os
import unittest

import openai

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "weather",
        "description": "Current weather in a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}

MODEL = "openai/gpt-4.1"


class OpenAIClient(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # No retries: a 429 must reach the test as the error it is.
        cls.client = openai.OpenAI(max_retries=0)

    def test_models(self):
        ids = [m.id for m in self.client.models.list()]
        self.assertIn(MODEL, ids)
        model = self.client.models.retrieve(MODEL)
        self.assertEqual(model.owned_by, "openai")
        # Extension fields are kept as extra attributes.
        self.assertEqual(model.context_window, 1047576)

    def test_completion(self):
        c = self.client.chat.completions.create(
            model=MODEL,
            messages=[{"role": "user", "content": "Tell me about carbon"}],
            max_tokens=50,
        )
        self.assertEqual(c.choices[0].message.content, "Carbon is element six.")
        self.assertEqual(c.choices[0].finish_reason, "stop")
        self.assertEqual(c.usage.total_tokens, 17)
        self.assertEqual(c.usage.prompt_tokens_details.cached_tokens, 4)

    def test_stream(self):
        stream = self.client.chat.completions.create(
            model=MODEL,
            messages=[{"role": "user", "content": "Tell me about carbon"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        deltas, finish, usage = [], None, None
        for chunk in stream:
            if chunk.usage:
                usage = chunk.usage
            if not chunk.choices:
                continue
            choice = chunk.choices[0]
            if choice.delta.content:
                deltas.append(choice.delta.content)
            if choice.finish_reason:
                finish = choice.finish_reason
        self.assertEqual(deltas, ["Carbo", "n is ", "eleme", "nt si", "x."])
        self.assertEqual(finish, "stop")
        self.assertEqual(usage.completion_tokens, 5)

    def test_tool_round_trip(self):
        messages = [{"role": "user", "content": "What is the weather in Paris?"}]
        first = self.client.chat.completions.create(model=MODEL, messages=messages, tools=[WEATHER_TOOL])
        message = first.choices[0].message
        self.assertEqual(first.choices[0].finish_reason, "tool_calls")
        call = message.tool_calls[0]
        self.assertEqual((call.id, call.function.name), ("call_w1", "weather"))
        self.assertEqual(json.loads(call.function.arguments), {"city": "Paris"})
        messages.append(message.model_dump(exclude_none=True))
        messages.append({"role": "tool", "tool_call_id": call.id, "content": "12C and sunny"})
        second = self.client.chat.completions.create(model=MODEL, messages=messages, tools=[WEATHER_TOOL])
        self.assertEqual(second.choices[0].message.content, "It is 12C in Paris.")

    def test_errors(self):
        with self.assertRaises(openai.NotFoundError):
            self.client.chat.completions.create(
                model="anthropic/claude-sonnet-4-5", messages=[{"role": "user", "content": "hi"}]
            )
        with self.assertRaises(openai.BadRequestError) as bad:
            self.client.chat.completions.create(
                model=MODEL, n=2, messages=[{"role": "user", "content": "hi"}]
            )
        self.assertEqual(bad.exception.param, "n")
        with self.assertRaises(openai.RateLimitError) as limited:
            self.client.chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": "busy?"}]
            )
        self.assertEqual(limited.exception.response.headers["retry-after"], "1")
        stranger = openai.OpenAI(api_key="not-the-token", base_url=os.environ["OPENAI_BASE_URL"], max_retries=0)
        with self.assertRaises(openai.AuthenticationError):
            stranger.models.list()

    def test_agent(self):
        base = os.environ["OPENAI_BASE_URL"] + "/agents/demoModePlain"
        agent = openai.OpenAI(base_url=base, max_retries=0)
        self.assertEqual([m.id for m in agent.models.list()], ["agent/demoModePlain"])
        c = agent.chat.completions.create(
            model="agent/demoModePlain", messages=[{"role": "user", "content": "Tell me about carbon"}]
        )
        self.assertEqual(c.choices[0].message.content, "Carbon is element six.")
        # The run travels in the extension field, kept as an extra attribute.
        self.assertEqual(c.boardsmith["events"][-1]["type"], "run.complete")
        stream = agent.chat.completions.create(
            model="agent/demoModePlain",
            stream=True,
            extra_body={"chat_id": c.boardsmith["chat_id"]},
            messages=[{"role": "user", "content": "And again?"}],
        )
        text = "".join(ch.choices[0].delta.content or "" for ch in stream if ch.choices)
        self.assertEqual(text, "Carbon is element six.")


if __name__ == "__main__":
    unittest.main(verbosity=2)
