"""Write a synthetic changelog site of N article changes, in infrafeed's entry format.

    python bench/corpus.py N DIR [--seed S] [--max-items M]

DIR receives ``site.toml`` and ``YYYY/YYYY-MM-DD.toml`` release files, like
``entries/``. The same N and seed always give the same bytes. The text is
shaped on the shipped changelog: Vietnamese titles of 14-97 characters
(median about 40), summaries of 41-298 (median about 160), inline code in a
fifth of the summaries, four modules, about three changes per release day,
and a quarter of the changes revising an article published earlier, under
its original id.

By default every feed keeps every item (``max_items`` at the schema's limit),
so the work of rendering grows with N as the work of loading does.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
from pathlib import Path

SITE = """\
# A synthetic site for infrafeed's benchmark (bench/corpus.py); not a real changelog.
title = "Synthetic Guide"
description = "Ghi lại mọi lần cập nhật nội dung của kho tri thức mẫu, để độc giả theo dõi"
language = "vi"
timezone = "Asia/Shanghai"
url = "https://example.org/guide"
changelog = "https://example.org/guide/blog/update-log/"

[author]
name = "Bench Author"
url = "https://example.org/guide/about/author"

[ids]
authority = "example.org"
date = 2000-01-01

[kinds.new]
heading = "Nội dung mới"
short = "Mới"

[kinds.revised]
heading = "Điều chỉnh nội dung"
short = "Điều chỉnh"

[kinds.restructured]
heading = "Điều chỉnh cấu trúc"
short = "Cấu trúc"

[kinds.major]
heading = "Cập nhật lớn"
short = "Cập nhật lớn"

[kinds.improved]
heading = "Cải thiện nội dung"
short = "Cải thiện"

[kinds.launch]
heading = "Dự án lên sóng"
short = "Lên sóng"

[kinds.init]
heading = "Khởi tạo dự án"
short = "Khởi tạo"
{modules}
[feeds]
url = "https://example.org/guide/feeds/"
max_items = {max_items}
all = true
modules = true
"""

MODULES = (
    (1, "Kiến thức tiền đề", "prerequisites"),
    (2, "Lập trình CUDA và tối ưu toán tử", "cuda"),
    (3, "Huấn luyện phân tán", "distributed"),
    (4, "Tối ưu suy luận", "inference"),
)


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# Shares of the shipped changelog's article changes per module.
MODULE_WEIGHTS = (14, 15, 6, 63)

WORDS = _words(
    "tối ưu suy luận song song tensor pipeline dữ liệu chuyên gia triển khai đa nút "
    "bộ nhớ băng thông độ trễ lớp cắt đồng bộ hai lần mỗi khối lịch trình hàng đợi "
    "phân tích so sánh thực chiến cấu hình mô hình lớn ngữ cảnh dài bản sao chiến lược "
    "tổng quan kiến trúc tách vì sao làm gì thêm hình minh họa bổ sung ghi chú tham số "
    "cập nhật viết lại theo phiên bản mới sửa logic giải thích cách dùng script ước lượng "
    "chạy được cùng lúc đo ba cách trên một máy card trước khởi động sau đối chiếu log chỉ số "
    "quét đồng thời giới thiệu loại bỏ sao chép phủ chọn định dạng độ chính xác lưu trữ "
    "tính toán khác biệt nền chương trình không lỗi đi qua cấp lúc nào cái giá hiệu năng "
    "để viết mã cao mà bỏ đúng đắn lượng giao tiếp giữa các vì cần nhiều bay xử lý chia "
    "đều và dùng chi phí tổ hợp từ đến attention chạy rỗng mô phỏng tải"
)
TERMS = _words(
    "CUDA GPU Warp Block Thread GEMM Reduce NCCL AllReduce All-to-All KV Cache vLLM SGLang "
    "TP PP DP EP MoE FP8 INT4 Prefill Decode Token Batch NVLink InfiniBand RDMA Ray "
    "PagedAttention FlashAttention DeepSeek-V3 Llama-3.1-70B Triton ZeRO FSDP Megatron"
)
IDENTIFIERS = _words(
    "gpu_memory_utilization max_num_batched_tokens kv_transfer_config __syncthreads() "
    "cache_salt free_blocks long_prefill_token_threshold calculate_kv_scales --nnodes "
    "tensor_parallel_size cudaMemcpyAsync torch.compile block_table"
)


def write_corpus(count: int, folder: Path, *, seed: int = 7, max_items: int = 100_000) -> int:
    """Write ``count`` article changes below ``folder``; return the number of release files."""
    rng = random.Random(f"infrafeed-bench-{seed}")
    folder.mkdir(parents=True, exist_ok=True)
    modules = "".join(
        f'\n[[modules]]\nnumber = {n}\nname = "{name}"\nslug = "{slug}"\nsection = "{slug}"\n'
        for n, name, slug in MODULES
    )
    site = SITE.format(modules=modules, max_items=max_items)
    (folder / "site.toml").write_text(site, encoding="utf-8")

    published: list[tuple[str, int, int]] = []  # (id, module, chapter) of every new article
    numbers: dict[int, int] = {}  # module -> articles so far, for ids and numbers
    day = dt.date(2000, 1, 3)
    written = files = 0
    while written < count:
        size = min(count - written, rng.choice((1, 2, 2, 3, 3, 3, 4, 4, 5)))
        text = _release(rng, day, size, published, numbers)
        path = folder / f"{day:%Y}" / f"{day.isoformat()}.toml"
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written += size
        files += 1
        day += dt.timedelta(days=rng.choice((1, 1, 1, 2)))
    return files


def release_text(rng: random.Random, day: dt.date, size: int) -> str:
    """One release of ``size`` new articles with fresh ids: the benchmark's "one new release"."""
    numbers = {n: 1_000_000 + rng.randrange(1_000_000) for n, _, _ in MODULES}
    return _release(rng, day, size, [], numbers)


def _release(
    rng: random.Random,
    day: dt.date,
    size: int,
    published: list[tuple[str, int, int]],
    numbers: dict[int, int],
) -> str:
    revisions: list[tuple[str, int, int]] = []
    fresh: list[tuple[str, int, int]] = []
    for _ in range(size):
        if published and rng.random() < 0.25:
            choice = published[rng.randrange(len(published))]
            if choice not in revisions:
                revisions.append(choice)
                continue
        module = rng.choices(range(1, 5), weights=MODULE_WEIGHTS)[0]
        numbers[module] = numbers.get(module, 0) + 1
        chapter = (numbers[module] - 1) // 8 % 60 + 1
        slug = MODULES[module - 1][2]
        fresh.append((f"{slug}-article-{numbers[module]}", module, chapter))
    published.extend(fresh)

    lines = [f"date = {day.isoformat()}\n"]
    for kind, changes in (("new", fresh), ("revised", revisions)):
        for module in sorted({m for _, m, _ in changes}):
            chosen = [c for c in changes if c[1] == module]
            lines.append(f'\n[[groups]]\nkind = "{kind}"\nmodule = {module}\n')
            if kind == "new" and rng.random() < 0.3:
                name = MODULES[module - 1][1]
                context = f"Module {module} · {name}: {_sentence(rng, 18, 279, 170)}"
                lines.append(f'context = "{context}"\n')
            for article_id, _, chapter in chosen:
                lines.append(_article(rng, article_id, module, chapter))
    return "".join(lines)


def _article(rng: random.Random, article_id: str, module: int, chapter: int) -> str:
    number = f"{chapter}.{rng.randrange(1, 12)}"
    out = [
        f'\n[[groups.articles]]\nid = "{article_id}"\nchapter = {chapter}\n',
        f'number = "{number}"\ntitle = "{_sentence(rng, 14, 97, 20)}"\n',
    ]
    if rng.random() < 0.95:
        out.append(f'summary = "{_summary(rng)}"\n')
    if rng.random() < 0.27:
        section = MODULES[module - 1][2]
        out.append(f'page = "https://example.org/guide/{section}/{article_id}"\n')
    return "".join(out)


def _sentence(rng: random.Random, low: int, high: int, mode: int) -> str:
    # The shipped lengths are skewed: most near the middle, a long tail; the
    # last word overshoots the target by a few characters.
    target = max(low, int(rng.triangular(low, high - 4, mode)) - 4)
    words = [rng.choice(TERMS) if rng.random() < 0.2 else rng.choice(WORDS)]
    while len(" ".join(words)) < target:
        words.append(rng.choice(TERMS) if rng.random() < 0.15 else rng.choice(WORDS))
    text = " ".join(words)
    return text[0].upper() + text[1:]


def _summary(rng: random.Random) -> str:
    text = _sentence(rng, 41, 298, 150)
    roll = rng.random()
    if roll < 0.2:
        words = text.split(" ")
        words.insert(rng.randrange(1, len(words) + 1), f"`{rng.choice(IDENTIFIERS)}`")
        text = " ".join(words)
    elif roll < 0.25:
        words = text.split(" ")
        at = rng.randrange(1, len(words))
        words[at] = f"*{words[at]}*"
        text = " ".join(words)
    elif roll < 0.28:
        text += f", xem [{rng.choice(TERMS)}](/guide/{MODULES[rng.randrange(4)][2]})"
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("count", type=int, help="how many article changes")
    parser.add_argument("folder", type=Path, help="the entries folder to write")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--max-items",
        type=int,
        default=100_000,
        help="site.toml [feeds] max_items (default: the limit, every feed keeps every item)",
    )
    args = parser.parse_args()
    files = write_corpus(args.count, args.folder, seed=args.seed, max_items=args.max_items)
    print(f"wrote {args.count} article changes in {files} release files to {args.folder}")


if __name__ == "__main__":
    main()
