"""A small MCP server for examples/mcp.ipynb, written with the MCP SDK's ``MCPServer``.

It answers from a fixed table (no network): ``forecast`` reports progress as it goes through
the days, ``chart`` returns a PNG bar chart of the rain. Run it yourself with
``python weather_server.py`` (it speaks MCP over stdin and stdout), or let jupyter_turns start
it: ``%chat mcp add weather -- python weather_server.py``.
"""

from __future__ import annotations

import io

from mcp.server.mcpserver import Context, Image, MCPServer

server = MCPServer("weather", log_level="WARNING")

# per city, five days of (high in °C, rain in mm)
FORECASTS = {
    "Bergen": [(11, 14.0), (10, 22.5), (12, 8.0), (13, 3.5), (12, 17.0)],
    "Oslo": [(16, 0.0), (18, 1.5), (17, 6.0), (15, 0.5), (16, 0.0)],
    "Tromsø": [(8, 2.0), (7, 4.5), (9, 0.0), (10, 1.0), (8, 3.0)],
}


def _days(city: str) -> list[tuple[int, float]]:
    if city not in FORECASTS:
        raise ValueError(f"no forecast for {city!r}; known: {', '.join(sorted(FORECASTS))}")
    return FORECASTS[city]


@server.tool()
async def forecast(city: str, days: int, ctx: Context) -> str:
    """Daily high temperature (°C) and rain (mm) for a Norwegian city.

    Args:
        city: Bergen, Oslo or Tromsø.
        days: how many days ahead, 1 to 5.
    """
    rows = _days(city)[: max(1, min(days, 5))]
    lines = []
    for day, (high, rain) in enumerate(rows, 1):
        await ctx.report_progress(day, len(rows), f"day {day}")
        lines.append(f"day {day}: {high} °C, {rain:g} mm rain")
    return f"{city}, next {len(rows)} days:\n" + "\n".join(lines)


@server.tool()
def chart(city: str) -> Image:
    """A bar chart (PNG) of the rain in a city over the next five days.

    Args:
        city: Bergen, Oslo or Tromsø.
    """
    from PIL import Image as PILImage
    from PIL import ImageDraw

    rows = _days(city)
    picture = PILImage.new("RGB", (260, 130), "white")
    draw = ImageDraw.Draw(picture)
    for day, (_, rain) in enumerate(rows):
        left = 20 + day * 48
        draw.rectangle((left, 120 - int(rain * 4), left + 32, 120), fill=(60, 110, 200))
    draw.line((10, 120, 250, 120), fill="black")
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG")
    return Image(data=buffer.getvalue(), format="png")


if __name__ == "__main__":
    server.run()
