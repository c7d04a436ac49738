"""Word wrap of the ring's captions: Chinese has no spaces, so it breaks between characters."""
import pytest

from app.views.ring.layout_text import LABEL_PAD_W, advance, make_font, wrap_lines

ZH = "格子的颜色表示它存的是谁的数据；灰色 = 还没到。加框：上一步刚到达。"
EN = "A slot's colour says whose data it holds; grey = not there yet. Outlined: arrived in the last step."


@pytest.mark.parametrize("text", [ZH, EN])
@pytest.mark.parametrize("width", [120, 200, 320])
def test_every_line_fits_and_nothing_is_lost(qapp, text, width):
    font = make_font("small", False, 14)
    lines = wrap_lines(text, font, width)
    assert len(lines) > 1
    assert all(advance(font, line) <= width - LABEL_PAD_W for line in lines), lines
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")  # only spaces at the breaks go


def test_cjk_punctuation_never_starts_a_line(qapp):
    font = make_font("small", False, 14)
    for width in range(60, 400, 7):
        assert not any(line[:1] in "，。；：、）" for line in wrap_lines(ZH, font, width))
