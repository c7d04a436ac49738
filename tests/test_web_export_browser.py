"""The exported lecture deck in a real browser: headless Chromium (Debian's) opens it from file://,
with no server and no network. The keys step and go scene by scene, a deep link opens exactly
there, the language switches without a reload, the address follows; the page shows the frame's
picture and the step's text that data.js holds for that place; no console error, no request but
file://; the phone and projector layouts; and a deck whose text holds markup shows it as text and
runs none of it. Without Chromium, chromium-driver or Selenium these tests skip and say why."""

import json
import os

import pytest

from web_browser import driver, export, file_url, missing, read_data, requests, viewport

WHY = missing()
# one worker runs them all (dev.py test runs pytest-xdist): one export of the lecture, one browser
pytestmark = [pytest.mark.skipif(bool(WHY), reason=WHY or "-"), pytest.mark.xdist_group("web")]
PWNED_TITLE = "<script>window.__pwned=1</script> All-gather"
PWNED_POINT = '<img src=x onerror="window.__pwned=1"> and </p><b>bold?</b>'


@pytest.fixture(scope="module")
def lecture(tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("web") / "lecture")
    out = export("lecture", folder)
    assert out.returncode == 0, out.stderr
    return folder, read_data(folder)


@pytest.fixture(scope="module")
def browser():
    d = driver(1280, 720)
    yield d
    d.quit()


@pytest.fixture
def page(browser):
    browser.get_log("browser")  # the last test's messages
    viewport(browser, 1280, 720)
    yield browser
    severe = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not severe, f"console errors: {severe}"


def open_page(d, folder, hash_=""):
    d.get("about:blank")
    d.get(file_url(folder, hash_))
    wait_shown(d)


def wait_shown(d):
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(d, 20).until(lambda d: d.execute_script(
        "var f = document.getElementById('frame'); return !!f.getAttribute('src') && f.complete && f.naturalWidth > 0"))


def shown(d) -> dict:
    return d.execute_script("""
        var f = document.getElementById('frame'), $ = function (id) { return document.getElementById(id); };
        return {src: f.getAttribute('src'), natural: f.naturalWidth, hash: location.hash, title: $('scene-title').textContent,
                live: $('live').textContent, explain: $('explain').textContent, formula: $('formula').textContent,
                points: Array.prototype.map.call($('points').children, function (li) { return li.textContent; }),
                lang: document.documentElement.lang, where: $('where').textContent,
                playing: $('play').getAttribute('aria-pressed')};""")


def key(d, k, n=1):
    from selenium.webdriver.common.action_chains import ActionChains

    for _ in range(n):
        ActionChains(d).send_keys(k).perform()
    wait_shown(d)


def expect(data, s, k, lang="en") -> dict:
    """What the page must show at scene index s (of the exported scenes), step k."""
    sc = data["scenes"][s]
    st = sc["steps"][lang][k]
    title = sc["title"]["zh"] if lang == "zh" and sc["title"]["zh"] else sc["title"]["en"]
    return {"src": st["img"], "hash": f"#scene={sc['number']}&step={k}&lang={lang}",
            "title": f"{sc['number']}. {title}", "live": st["live"]}


def assert_at(d, data, s, k, lang="en"):
    got, want = shown(d), expect(data, s, k, lang)
    assert {key_: got[key_] for key_ in want} == want
    assert got["natural"] == 2 * data["sizes"][want["src"]][0]  # the 2× picture, loaded


def test_the_keys_step_and_go_scene_by_scene_and_the_address_follows(page, lecture):
    from selenium.webdriver.common.keys import Keys

    folder, data = lecture
    open_page(page, folder)
    assert_at(page, data, 0, data["scenes"][0]["start"])  # the first scene, at its own step
    key(page, Keys.ARROW_RIGHT)
    assert_at(page, data, 0, 1)
    key(page, Keys.SPACE)
    assert_at(page, data, 0, 2)
    key(page, Keys.ARROW_LEFT)
    assert_at(page, data, 0, 1)
    last = len(data["scenes"][0]["steps"]["en"]) - 1
    key(page, Keys.ARROW_RIGHT, last - 1)
    assert_at(page, data, 0, last)
    key(page, Keys.ARROW_RIGHT)  # past a scene's last step: the next scene's start
    assert_at(page, data, 1, 0)
    key(page, Keys.ARROW_LEFT)  # and back to the last step of the one before
    assert_at(page, data, 0, last)
    key(page, Keys.PAGE_DOWN)  # scene by scene, each at its own step (as the app's deck opens it)
    assert_at(page, data, 1, data["scenes"][1]["start"])
    key(page, Keys.PAGE_DOWN)
    assert_at(page, data, 2, data["scenes"][2]["start"])
    key(page, Keys.PAGE_UP)
    assert_at(page, data, 1, data["scenes"][1]["start"])
    key(page, Keys.END)
    n = len(data["scenes"])
    assert_at(page, data, n - 1, data["scenes"][n - 1]["start"])
    key(page, Keys.HOME)
    assert_at(page, data, 0, data["scenes"][0]["start"])
    got = shown(page)
    assert got["points"] == [p["en"] for p in data["scenes"][0]["points"]]
    first = data["scenes"][0]["steps"]["en"][0]["explain"]
    assert got["explain"].startswith(first[0] if isinstance(first[0], str) else first[0][2][0])


def test_a_deep_link_opens_exactly_there_and_the_language_switches_without_a_reload(page, lecture):
    folder, data = lecture
    open_page(page, folder, "#scene=5&step=3&lang=zh")
    s = next(i for i, sc in enumerate(data["scenes"]) if sc["number"] == 5)
    assert_at(page, data, s, 3, "zh")
    got = shown(page)
    zh = data["scenes"][s]["steps"]["zh"][3]
    assert got["lang"] == "zh-CN" and got["explain"].startswith(zh["explain"][0][2][0]) and "第 3" in got["explain"]
    assert got["points"] == [p["zh"] for p in data["scenes"][s]["points"]] and "T =" in got["formula"]
    page.execute_script("window.__same_page = 1")
    page.find_element("id", "lang").click()
    wait_shown(page)
    assert_at(page, data, s, 3, "en")
    assert page.execute_script("return window.__same_page") == 1  # switched in place, not reloaded
    page.execute_script("location.hash = '#scene=2&step=4&lang=zh'")  # an address typed or followed later
    page.find_element("id", "scene-title")  # (hashchange is handled before the next command runs)
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(page, 10).until(lambda d: shown(d)["title"].startswith("2."))
    wait_shown(page)
    assert_at(page, data, 1, 4, "zh")


def test_play_walks_the_frames_to_the_scenes_end_and_the_scene_list_jumps(page, lecture):
    from selenium.webdriver.support.ui import WebDriverWait

    folder, data = lecture
    s = next(i for i, sc in enumerate(data["scenes"]) if sc["id"] == "algos")  # recursive doubling: 3 steps
    K = len(data["scenes"][s]["steps"]["en"]) - 1
    open_page(page, folder, f"#scene={data['scenes'][s]['number']}&step=0")
    page.find_element("id", "play").click()
    assert shown(page)["playing"] == "true"
    WebDriverWait(page, 30).until(lambda d: shown(d)["playing"] == "false")  # it stops at the end by itself
    wait_shown(page)
    assert_at(page, data, s, K)
    buttons = page.find_elements("css selector", "#scene-list button")
    assert len(buttons) == len(data["scenes"])
    buttons[3].click()
    wait_shown(page)
    assert_at(page, data, 3, data["scenes"][3]["start"])
    assert buttons[3].get_attribute("aria-current") == "step" and buttons[0].get_attribute("aria-current") is None


def test_no_console_error_and_no_request_but_the_folders_own_files(page, lecture):
    from selenium.webdriver.common.keys import Keys

    folder, data = lecture
    requests(page)  # (the last test's)
    open_page(page, folder)
    for _ in range(len(data["scenes"])):  # every scene, both languages
        key(page, Keys.PAGE_DOWN)
        key(page, Keys.ARROW_RIGHT)
    page.find_element("id", "lang").click()
    wait_shown(page)
    key(page, Keys.HOME)
    asked = requests(page)  # every request DevTools saw, file:// ones included
    assert len([u for u in asked if u.endswith(".png")]) > len(data["scenes"])
    assert {u.rsplit("/", 1)[1] for u in asked if not u.endswith(".png")} >= {"index.html", "page.css", "data.js",
                                                                              "page.js"}
    assert all(u.startswith(file_url(folder).rsplit("/", 1)[0] + "/") for u in asked), asked
    # the page's own Resource Timing: the navigation and any resource it lists, nothing but file://
    urls = page.execute_script("return performance.getEntries().filter(function (e) {"
                               " return e.entryType === 'navigation' || e.entryType === 'resource'; })"
                               ".map(function (e) { return e.name; })")
    assert urls and all(u.startswith("file://") for u in urls), urls
    assert page.execute_script("return document.scripts.length") == 2  # data.js and page.js, nothing inline


def rects(d) -> dict:
    return d.execute_script("""
        var r = function (id) { var b = document.getElementById(id).getBoundingClientRect();
                                return {left: b.left, right: b.right, top: b.top, bottom: b.bottom, width: b.width}; };
        return {frame: r('frame'), text: r('text'), nav: r('scene-nav'), page: document.documentElement.scrollWidth,
                font: parseFloat(getComputedStyle(document.documentElement).fontSize)};""")


def test_a_phone_puts_the_picture_above_the_text_and_a_projector_gives_the_picture_the_room(page, lecture):
    folder, _ = lecture
    open_page(page, folder, "#scene=2&step=1")
    wide = rects(page)
    assert wide["text"]["left"] >= wide["frame"]["right"] and wide["frame"]["width"] > 600  # side by side
    assert wide["nav"]["width"] > 0 and wide["page"] <= 1280
    viewport(page, 390, 844, mobile=True)
    phone = rects(page)
    assert phone["frame"]["bottom"] <= phone["text"]["top"]  # the picture above the text
    assert 350 <= phone["frame"]["width"] <= 390 and phone["page"] <= 390  # full width, no sideways scrolling
    assert phone["nav"]["width"] == 0  # the scene list folds away behind its button
    page.find_element("id", "scenes-toggle").click()
    assert rects(page)["nav"]["width"] > 200
    viewport(page, 1920, 1080)
    big = rects(page)
    assert big["font"] > wide["font"] and big["frame"]["width"] > 1.5 * wide["frame"]["width"] * 0.9
    assert big["text"]["left"] >= big["frame"]["right"]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    from app.deck.model import builtin_path

    tmp = tmp_path_factory.mktemp("hostile")
    doc = json.load(open(builtin_path(), encoding="utf-8"))
    doc["title"] = {"en": PWNED_TITLE, "zh": PWNED_TITLE}
    doc["scenes"] = [dict(doc["scenes"][4], title={"en": PWNED_TITLE, "zh": PWNED_TITLE},
                          points=[{"en": PWNED_POINT, "zh": PWNED_POINT}, {"en": "<b>not bold</b>"}])]
    (tmp / "deck.json").write_text(json.dumps(doc), encoding="utf-8")
    folder = str(tmp / "page")
    out = export(str(tmp / "deck.json"), folder)
    assert out.returncode == 0, out.stderr
    return folder


def test_a_deck_whose_text_holds_markup_shows_it_as_text_and_runs_none_of_it(page, hostile):
    open_page(page, hostile)
    got = shown(page)
    assert got["title"] == "1. " + PWNED_TITLE  # shown literally, every character
    assert got["points"] == [PWNED_POINT, "<b>not bold</b>"]
    assert page.title.startswith(PWNED_TITLE)
    assert page.execute_script("return typeof window.__pwned") == "undefined"  # no script of the deck ran
    assert page.execute_script("return document.images.length") == 1  # the frame: no <img> from the deck
    assert page.execute_script("return document.querySelectorAll('#points b, #scene-title script').length") == 0
    page.find_element("id", "lang").click()
    wait_shown(page)
    assert page.execute_script("return typeof window.__pwned") == "undefined"
    assert os.path.exists(os.path.join(hostile, "index.html"))
