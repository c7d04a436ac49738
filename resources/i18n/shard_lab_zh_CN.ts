<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
    <context>
        <name>BufferView</name>
        <message>
            <source>Buffers</source>
            <translation>缓冲区</translation>
        </message>
        <message>
            <source>Buffers are shown during a collective: choose all-gather, reduce-scatter or all-reduce.
This scenario has no stand-alone collective to show.</source>
            <translation>缓冲区在集合通信进行时显示：请选择 all-gather、reduce-scatter 或 all-reduce。
此场景没有可单独显示的集合通信。</translation>
        </message>
        <message>
            <source>Show an all-reduce</source>
            <translation>显示一个 all-reduce</translation>
        </message>
        <message>
            <source>position in the buffer (element)</source>
            <translation>缓冲区中的位置（元素）</translation>
        </message>
        <message>
            <source>chunk</source>
            <translation>块</translation>
        </message>
        <message>
            <source>value</source>
            <translation>数值</translation>
        </message>
        <message>
            <source>{what}: its messages do not each carry one chunk of one buffer (an all-to-all, a ppermute or the multi-axis ring), so this tab has nothing to draw; the Mesh tab and the timeline show its messages.</source>
            <translation>{what}：它的每条消息并不只携带一个缓冲区中的一块（all-to-all、ppermute 或多轴环），因此本页无可绘制的内容；网格页和时间线显示它的消息。</translation>
        </message>
        <message>
            <source>{op}: every GPU's buffer, one row per GPU ({n} × {L} values in {k} chunks)</source>
            <translation>{op}：每个 GPU 的缓冲区，每个 GPU 一行（{n} × {L} 个数值，分为 {k} 块）</translation>
        </message>
        <message>
            <source>{op}: every GPU's buffer, one row per GPU ({n} × {L} values)</source>
            <translation>{op}：每个 GPU 的缓冲区，每个 GPU 一行（{n} × {L} 个数值）</translation>
        </message>
        <message>
            <source>= not there yet (no data; white means 0)   ·   colour = the value, one scale for the whole collective</source>
            <translation>= 尚未到达（无数据；白色表示 0）   ·   颜色 = 数值，整个集合通信使用同一色标</translation>
        </message>
        <message>
            <source>   ·   number = how many GPUs' data the chunk sums</source>
            <translation>   ·   数字 = 该块累加了几个 GPU 的数据</translation>
        </message>
        <message>
            <source>   ·   lines = chunk boundaries</source>
            <translation>   ·   线 = 块的边界</translation>
        </message>
        <message>
            <source>GPU {d}</source>
            <translation>GPU {d}</translation>
        </message>
        <message>
            <source>Before step 1 of {K}: every GPU holds only its own chunk; the hatched chunks are still to come.</source>
            <translation>第 1 步（共 {K} 步）之前：每个 GPU 只持有自己的块；带斜线的块尚未到达。</translation>
        </message>
        <message>
            <source>Before step 1 of {K}: every GPU holds only its own data; nothing is summed yet.</source>
            <translation>第 1 步（共 {K} 步）之前：每个 GPU 只持有自己的数据；尚未求和。</translation>
        </message>
        <message>
            <source>After step {k} of {K}: </source>
            <translation>第 {k} 步（共 {K} 步）之后：</translation>
        </message>
        <message>
            <source>the switch holds the sum of {j} of {n} contributions; the GPUs' buffers have not changed yet.</source>
            <translation>交换机持有 {n} 份贡献中 {j} 份的和；各 GPU 的缓冲区尚未改变。</translation>
        </message>
        <message>
            <source>its whole buffer</source>
            <translation>它的整个缓冲区</translation>
        </message>
        <message>
            <source>chunk {c}</source>
            <translation>块 {c}</translation>
        </message>
        <message>
            <source>GPU {d} received chunk {c}; it now holds {h} of {n} chunks.</source>
            <translation>GPU {d} 收到了块 {c}；它现在持有 {n} 块中的 {h} 块。</translation>
        </message>
        <message>
            <source>GPU {d} holds the sum of {j} of {n} contributions in {where}.</source>
            <translation>GPU {d} 在{where}中持有 {n} 份贡献中 {j} 份的部分和。</translation>
        </message>
        <message>
            <source>GPU {d} received the finished sum of {where}; {h} of its {k} chunks are complete.</source>
            <translation>GPU {d} 收到了{where}的最终和；它的 {k} 块中已有 {h} 块完成。</translation>
        </message>
        <message>
            <source>Before step 1 of {K}: every GPU holds only its own buffer, band d of row d: n = {n} blocks, block j for GPU j.</source>
            <translation>第 1 步（共 {K} 步）之前：每块 GPU 只持有自己的缓冲区，即第 d 行的第 d 段：n = {n} 个数据块，第 j 块发给 GPU j。</translation>
        </message>
        <message>
            <source>Done after {K} steps: GPU d holds block d of every GPU's buffer (one slot in every band) — the transpose of what it started with.</source>
            <translation>{K} 步后完成：GPU d 持有每块 GPU 缓冲区的第 d 块（每段中一格）——正是它起初所持内容的转置。</translation>
        </message>
        <message>
            <source>After step {k} of {K}: GPU {d} received block {d} of GPU {s}; it now holds {h} of the {n} blocks it ends with.</source>
            <translation>第 {k} 步（共 {K} 步）之后：GPU {d} 收到了 GPU {s} 的第 {d} 块；它最终应有 {n} 块，现在已有 {h} 块。</translation>
        </message>
        <message>
            <source>Done after {K} steps: each GPU holds one chunk summed over the {n} GPUs of its group.</source>
            <translation>{K} 步后完成：每个 GPU 持有一块，为其所在组 {n} 个 GPU 之和。</translation>
        </message>
        <message>
            <source>Done after {K} steps: every GPU holds its group's full sum of {n} contributions in every chunk — the rows of a group are identical.</source>
            <translation>{K} 步后完成：每个 GPU 在每一块中都持有其所在组 {n} 份贡献的完整和——同组各行完全相同。</translation>
        </message>
        <message>
            <source>Done after {K} steps: every GPU holds all {n} chunks.</source>
            <translation>{K} 步后完成：每个 GPU 都持有全部 {n} 块。</translation>
        </message>
        <message>
            <source>GPU {d}: chunk {c}</source>
            <translation>GPU {d}：块 {c}</translation>
        </message>
        <message>
            <source>Done after {K} steps: each GPU holds one chunk summed over all {n} GPUs ({which}, …).</source>
            <translation>{K} 步后完成：每个 GPU 持有一块对全部 {n} 个 GPU 求和的结果（{which}，…）。</translation>
        </message>
        <message>
            <source>Done after {K} steps: every GPU holds the full sum of all {n} contributions in every chunk — the rows are identical.</source>
            <translation>{K} 步后完成：每个 GPU 的每一块都持有全部 {n} 份贡献的总和——各行完全相同。</translation>
        </message>
        <message>
            <source>This tab shows every value in every GPU's buffer during a collective run as a scenario of its own.
This run's {k} collectives are on the Ring tab and the timeline, but it does not keep their buffers' values: show an all-reduce to watch one value by value.</source>
            <translation>本页显示集合通信作为单独场景运行时每块 GPU 缓冲区里的每个数值。
这次运行的 {k} 个集合通信在“环形”页和时间线上，但它没有保存其缓冲区的数值：显示一个 all-reduce，可逐个数值地观看。</translation>
        </message>
        <message>
            <source>{op}: every chip's buffer, one row per chip ({n} × {L} values in {k} chunks)</source>
            <translation>{op}：每个芯片的缓冲区，每个芯片一行（{n} × {L} 个数值，分为 {k} 块）</translation>
        </message>
        <message>
            <source>{op}: every chip's buffer, one row per chip ({n} × {L} values)</source>
            <translation>{op}：每个芯片的缓冲区，每个芯片一行（{n} × {L} 个数值）</translation>
        </message>
        <message>
            <source>   ·   number = how many chips' data the chunk sums</source>
            <translation>   ·   数字 = 该块累加了几个芯片的数据</translation>
        </message>
        <message>
            <source>chip {d}</source>
            <translation>芯片 {d}</translation>
        </message>
    </context>
    <context>
        <name>BuildStatus</name>
        <message>
            <source>Building {kind} on {n} devices of {machine}…</source>
            <translation>正在构建：{machine} 上 {n} 个设备的 {kind}…</translation>
        </message>
        <message>
            <source>Building {kind} on {n} devices…</source>
            <translation>正在构建：{n} 个设备的 {kind}…</translation>
        </message>
        <message>
            <source>{s} s</source>
            <translation>{s} 秒</translation>
        </message>
        <message>
            <source>The scenario on screen stays until the new one is ready.</source>
            <translation>新场景就绪前，屏幕上的场景保持不变。</translation>
        </message>
    </context>
    <context>
        <name>CalibrationDialog</name>
        <message>
            <source>Calibrate the link: α and β</source>
            <translation>校准链路：α 和 β</translation>
        </message>
        <message>
            <source>Measure with MPI on this machine</source>
            <translation>在本机用 MPI 实测</translation>
        </message>
        <message>
            <source>Ranks</source>
            <translation>进程数（ranks）</translation>
        </message>
        <message>
            <source>Message sizes</source>
            <translation>消息大小</translation>
        </message>
        <message>
            <source>Collectives</source>
            <translation>集合通信</translation>
        </message>
        <message>
            <source>Timed runs</source>
            <translation>计时次数</translation>
        </message>
        <message>
            <source>LOW..HIGH for powers of two (8B..64MiB), LOW..HIGH:x4, or a list such as 4KiB,1MiB</source>
            <translation>LOW..HIGH 表示 2 的幂（8B..64MiB），LOW..HIGH:x4，或列表，如 4KiB,1MiB</translation>
        </message>
        <message>
            <source>ring ×3, rd and linear all-reduce</source>
            <translation>ring ×3、rd 和 linear all-reduce</translation>
        </message>
        <message>
            <source>ring only</source>
            <translation>只测 ring</translation>
        </message>
        <message>
            <source>all-reduce: ring, rd, linear</source>
            <translation>all-reduce：ring、rd、linear</translation>
        </message>
        <message>
            <source>Allow Open MPI to run as root</source>
            <translation>允许 Open MPI 以 root 身份运行</translation>
        </message>
        <message>
            <source>Measure</source>
            <translation>测量</translation>
        </message>
        <message>
            <source>Cancel</source>
            <translation>取消</translation>
        </message>
        <message>
            <source>Open nccl-tests output…</source>
            <translation>打开 nccl-tests 输出…</translation>
        </message>
        <message>
            <source>Text printed by all_reduce_perf, all_gather_perf or reduce_scatter_perf</source>
            <translation>all_reduce_perf、all_gather_perf 或 reduce_scatter_perf 打印的文本</translation>
        </message>
        <message>
            <source>message size S (bytes)</source>
            <translation>消息大小 S（字节）</translation>
        </message>
        <message>
            <source>time (µs)</source>
            <translation>时间（µs）</translation>
        </message>
        <message>
            <source>measured (dots) and the α–β model (lines)</source>
            <translation>实测（点）与 α–β 模型（线）</translation>
        </message>
        <message>
            <source>Link name</source>
            <translation>链路名称</translation>
        </message>
        <message>
            <source>Use as link</source>
            <translation>用作链路</translation>
        </message>
        <message>
            <source>Close</source>
            <translation>关闭</translation>
        </message>
        <message>
            <source>Not available: %s</source>
            <translation>不可用：%s</translation>
        </message>
        <message numerus="yes">
            <source>Measuring on %n rank(s)…</source>
            <translation>
                <numerusform>正在 %n 个 rank 上测量…</numerusform>
            </translation>
        </message>
        <message>
            <source>Cancelling…</source>
            <translation>正在取消…</translation>
        </message>
        <message>
            <source>Measured %1 points with %2.</source>
            <translation>用 %2 测得 %1 个点。</translation>
        </message>
        <message>
            <source>Measurement failed: %s</source>
            <translation>测量失败：%s</translation>
        </message>
        <message>
            <source>Measurement cancelled.</source>
            <translation>测量已取消。</translation>
        </message>
        <message>
            <source>Open nccl-tests output</source>
            <translation>打开 nccl-tests 输出</translation>
        </message>
        <message>
            <source>Text (*.txt *.log *.out);;All files (*)</source>
            <translation>文本 (*.txt *.log *.out);;所有文件 (*)</translation>
        </message>
        <message>
            <source>Cannot use %1: %2</source>
            <translation>无法使用 %1：%2</translation>
        </message>
        <message>
            <source>NVLink 4 (assumed)</source>
            <translation>NVLink 4（假定）</translation>
        </message>
        <message>
            <source>Read %1: %2</source>
            <translation>已读取 %1：%2</translation>
        </message>
        <message>
            <source>Cannot fit α and β: %s</source>
            <translation>无法拟合 α 和 β：%s</translation>
        </message>
        <message>
            <source>inside a node</source>
            <translation>节点内</translation>
        </message>
        <message>
            <source>between nodes</source>
            <translation>节点间</translation>
        </message>
        <message>
            <source>Warning: the fit %1 explains the data badly: its worst error %2% is above %3% (nccl-tests scatters a few %, the α–β line's protocol ramp 10–20 %). NCCL may have run another algorithm (Tree, NVLS: rerun with NCCL_ALGO=Ring), or the node count is wrong.</source>
            <translation>警告：%1的拟合不能很好地解释数据：其最大误差 %2% 超过 %3%（nccl-tests 的波动只有几个百分点，α–β 直线在协议切换段偏差 10–20 %）。NCCL 可能运行了另一种算法（Tree、NVLS：请用 NCCL_ALGO=Ring 重新测量），或节点数有误。</translation>
        </message>
        <message>
            <source>No measurements yet: measure, or open an nccl-tests file.</source>
            <translation>还没有测量数据：请测量，或打开 nccl-tests 文件。</translation>
        </message>
        <message>
            <source>Inside a node: %1</source>
            <translation>节点内：%1</translation>
        </message>
        <message>
            <source>Inside a node: NVLink 4 assumed (the log has no one-node run)</source>
            <translation>节点内：假定为 NVLink 4（日志中没有单节点运行）</translation>
        </message>
        <message>
            <source>Between nodes (%1): %2</source>
            <translation>节点间（%1）：%2</translation>
        </message>
        <message>
            <source>α = %1 µs   β = %2 GB/s   R² = %3   worst error %4%   (fitted to %5 %6 points)</source>
            <translation>α = %1 µs   β = %2 GB/s   R² = %3   最大误差 %4%   （用 %5 个%6点拟合）</translation>
        </message>
        <message>
            <source>ring</source>
            <translation>ring（环形）</translation>
        </message>
        <message>
            <source>measured</source>
            <translation>实测</translation>
        </message>
        <message>
            <source>it is larger than %1 MiB; nccl-tests output is far smaller</source>
            <translation>它大于 %1 MiB；nccl-tests 的输出要小得多</translation>
        </message>
        <message>
            <source>Read %1: inside a node %2; between nodes α = %3 µs, β = %4 GB/s (%5)</source>
            <translation>已读取 %1：节点内 %2；节点之间 α = %3 µs，β = %4 GB/s（%5）</translation>
        </message>
    </context>
    <context>
        <name>Classroom</name>
        <message>
            <source>&amp;Open scenario…</source>
            <translation>打开场景(&amp;O)…</translation>
        </message>
        <message>
            <source>&amp;Save scenario…</source>
            <translation>保存场景(&amp;S)…</translation>
        </message>
        <message>
            <source>Save the scenario and the current step as a file</source>
            <translation>把场景和当前步保存为文件</translation>
        </message>
        <message>
            <source>Current frame as &amp;PNG…</source>
            <translation>当前画面导出为 &amp;PNG…</translation>
        </message>
        <message>
            <source>Current frame as &amp;SVG…</source>
            <translation>当前画面导出为 &amp;SVG…</translation>
        </message>
        <message>
            <source>The ring picture as it is now, 1280×720, as a PNG image</source>
            <translation>当前的环形视图画面，1280×720，PNG 图片</translation>
        </message>
        <message>
            <source>The ring picture as it is now, as vector graphics for slides</source>
            <translation>当前的环形视图画面，矢量图，适合放进幻灯片</translation>
        </message>
        <message>
            <source>Animation as &amp;GIF…</source>
            <translation>动画导出为 &amp;GIF…</translation>
        </message>
        <message>
            <source>Every step of the collective as a looping GIF</source>
            <translation>集合通信的每一步，做成循环播放的 GIF</translation>
        </message>
        <message>
            <source>Animation as &amp;MP4…</source>
            <translation>动画导出为 &amp;MP4…</translation>
        </message>
        <message>
            <source>Every step of the collective as an MP4 video</source>
            <translation>集合通信的每一步，做成 MP4 视频</translation>
        </message>
        <message>
            <source>Trace as &amp;Chrome JSON…</source>
            <translation>trace 导出为 &amp;Chrome JSON…</translation>
        </message>
        <message>
            <source>Every message, for Perfetto (ui.perfetto.dev) or chrome://tracing</source>
            <translation>每一条消息，可用 Perfetto（ui.perfetto.dev）或 chrome://tracing 打开</translation>
        </message>
        <message>
            <source>Trace as CS&amp;V…</source>
            <translation>trace 导出为 CS&amp;V…</translation>
        </message>
        <message>
            <source>One row per message, for a spreadsheet</source>
            <translation>每条消息一行，可用电子表格打开</translation>
        </message>
        <message>
            <source>&amp;Predict, then reveal</source>
            <translation>先预测，再揭晓(&amp;P)</translation>
        </message>
        <message>
            <source>Before each step, guess where the next blocks go; then watch</source>
            <translation>每一步之前，先猜下一批块发往哪里，再看结果</translation>
        </message>
        <message>
            <source>Switch &amp;language (中文 / English)</source>
            <translation>切换语言(&amp;L)（中文 / English）</translation>
        </message>
        <message>
            <source>Switch between Chinese and English</source>
            <translation>在中文和英文之间切换</translation>
        </message>
        <message>
            <source>Open &amp;recent</source>
            <translation>最近打开(&amp;R)</translation>
        </message>
        <message>
            <source>&amp;Export</source>
            <translation>导出(&amp;E)</translation>
        </message>
        <message>
            <source>&amp;Theme</source>
            <translation>主题(&amp;T)</translation>
        </message>
        <message>
            <source>&amp;Language</source>
            <translation>语言(&amp;L)</translation>
        </message>
        <message>
            <source>&amp;Learn</source>
            <translation>学习(&amp;L)</translation>
        </message>
        <message>
            <source>Formula: closed form vs. simulation</source>
            <translation>公式：解析公式与模拟结果</translation>
        </message>
        <message>
            <source>Predict, then reveal</source>
            <translation>先预测，再揭晓</translation>
        </message>
        <message>
            <source>Answer the prediction: this device or chunk number</source>
            <translation>回答预测：按设备号或块号</translation>
        </message>
        <message>
            <source>Open scenario</source>
            <translation>打开场景</translation>
        </message>
        <message>
            <source>Save scenario</source>
            <translation>保存场景</translation>
        </message>
        <message>
            <source>Shard Lab scenarios (*.json)</source>
            <translation>Shard Lab 场景文件 (*.json)</translation>
        </message>
        <message>
            <source>Cannot open scenario</source>
            <translation>无法打开场景</translation>
        </message>
        <message>
            <source>Opened %1</source>
            <translation>已打开 %1</translation>
        </message>
        <message>
            <source>Cannot save scenario</source>
            <translation>无法保存场景</translation>
        </message>
        <message>
            <source>Saved %1</source>
            <translation>已保存 %1</translation>
        </message>
        <message>
            <source>(none yet)</source>
            <translation>（暂无）</translation>
        </message>
        <message>
            <source>Clear list</source>
            <translation>清空列表</translation>
        </message>
        <message>
            <source>PNG image (*.png)</source>
            <translation>PNG 图片 (*.png)</translation>
        </message>
        <message>
            <source>SVG image (*.svg)</source>
            <translation>SVG 图片 (*.svg)</translation>
        </message>
        <message>
            <source>GIF animation (*.gif)</source>
            <translation>GIF 动画 (*.gif)</translation>
        </message>
        <message>
            <source>MP4 video (*.mp4)</source>
            <translation>MP4 视频 (*.mp4)</translation>
        </message>
        <message>
            <source>Chrome trace (*.json)</source>
            <translation>Chrome trace (*.json)</translation>
        </message>
        <message>
            <source>CSV table (*.csv)</source>
            <translation>CSV 表格 (*.csv)</translation>
        </message>
        <message>
            <source>Export</source>
            <translation>导出</translation>
        </message>
        <message>
            <source>Exporting animation</source>
            <translation>正在导出动画</translation>
        </message>
        <message>
            <source>Drawing every frame…</source>
            <translation>正在绘制每一帧…</translation>
        </message>
        <message>
            <source>Cancel</source>
            <translation>取消</translation>
        </message>
        <message>
            <source>Choose a .png, .svg, .gif, .mp4, .json or .csv file name.</source>
            <translation>请选择 .png、.svg、.gif、.mp4、.json 或 .csv 文件名。</translation>
        </message>
        <message>
            <source>Export failed</source>
            <translation>导出失败</translation>
        </message>
        <message>
            <source>Exported %1</source>
            <translation>已导出 %1</translation>
        </message>
        <message>
            <source>Export cancelled; no file was written.</source>
            <translation>已取消导出，没有写入任何文件。</translation>
        </message>
        <message>
            <source>Exported %1 (%2 frames)</source>
            <translation>已导出 %1（%2 帧）</translation>
        </message>
        <message>
            <source>The last session's scenario could not be restored.</source>
            <translation>上次会话的场景无法恢复。</translation>
        </message>
        <message>
            <source>Export in progress</source>
            <translation>正在导出</translation>
        </message>
        <message>
            <source>An animation is being exported. Cancel the export and close the window?</source>
            <translation>动画正在导出。要取消导出并关闭窗口吗？</translation>
        </message>
        <message>
            <source>Cancel export and close</source>
            <translation>取消导出并关闭</translation>
        </message>
        <message>
            <source>Keep exporting</source>
            <translation>继续导出</translation>
        </message>
        <message>
            <source>Open a saved scenario, run or deck (.json, .json.gz)</source>
            <translation>打开保存的场景、运行或讲稿（.json、.json.gz）</translation>
        </message>
        <message>
            <source>Scenarios, runs and decks (*.json *.json.gz);;All files (*)</source>
            <translation>场景、运行和讲稿 (*.json *.json.gz);;所有文件 (*)</translation>
        </message>
    </context>
    <context>
        <name>ControlPanel</name>
        <message>
            <source>Scenario</source>
            <translation>场景</translation>
        </message>
        <message>
            <source>&amp;Scenario</source>
            <translation>场景(&amp;S)</translation>
        </message>
        <message>
            <source>&amp;Operation</source>
            <translation>操作(&amp;O)</translation>
        </message>
        <message>
            <source>&amp;Algorithm</source>
            <translation>算法(&amp;A)</translation>
        </message>
        <message>
            <source>&amp;Devices n</source>
            <translation>设备数 n(&amp;D)</translation>
        </message>
        <message>
            <source>Message si&amp;ze S</source>
            <translation>消息大小 S(&amp;Z)</translation>
        </message>
        <message>
            <source>&amp;Link</source>
            <translation>链路(&amp;L)</translation>
        </message>
        <message>
            <source>Mes&amp;h axes</source>
            <translation>网格轴(&amp;H)</translation>
        </message>
        <message>
            <source>Mesh axes and sizes, major to minor, e.g. X=2,Y=4 (n is their product)</source>
            <translation>网格的轴与大小，由主到次，例如 X=2,Y=4（n 是它们的乘积）</translation>
        </message>
        <message>
            <source>Pa&amp;rameters</source>
            <translation>参数(&amp;R)</translation>
        </message>
        <message>
            <source>Keys: Space play/pause · ← → step · Home/End · [ ] speed · O loop</source>
            <translation>按键：空格 播放/暂停 · ← → 单步 · Home/End · [ ] 速度 · O 循环</translation>
        </message>
        <message>
            <source>Collective</source>
            <translation>集合通信</translation>
        </message>
        <message>
            <source>Sharded matmul</source>
            <translation>切分矩阵乘法</translation>
        </message>
        <message>
            <source>Tensor-parallel forward</source>
            <translation>张量并行前向</translation>
        </message>
        <message>
            <source>Decode step (TP)</source>
            <translation>decode 一步（张量并行）</translation>
        </message>
        <message>
            <source>Mesh (named axes)</source>
            <translation>网格（命名轴）</translation>
        </message>
        <message>
            <source>2 all-reduces per layer + logits all-gather</source>
            <translation>每层两次 all-reduce + logits 的 all-gather</translation>
        </message>
        <message>
            <source>Hierarchical — NCCL NVLS Tree</source>
            <translation>分层——NCCL 的 NVLS Tree</translation>
        </message>
        <message>
            <source>The forward's collectives carry the model's real bytes: [B, T, d_model] activations and [B, T, vocab] logits, 2 bytes each.</source>
            <translation>前向的集合通信搬运模型的真实字节数：[B, T, d_model] 的激活和 [B, T, vocab] 的 logits，每个元素 2 字节。</translation>
        </message>
        <message>
            <source>NVLS</source>
            <translation>NVLS</translation>
        </message>
        <message>
            <source>NCCL rings</source>
            <translation>NCCL 环</translation>
        </message>
        <message>
            <source>hierarchical</source>
            <translation>分层</translation>
        </message>
        <message>
            <source>torus rings</source>
            <translation>环面上的环</translation>
        </message>
        <message>
            <source>NCCL Tree</source>
            <translation>NCCL 树（Tree）</translation>
        </message>
        <message>
            <source>NVLS Tree</source>
            <translation>NVLS Tree</translation>
        </message>
        <message>
            <source>machine's choice ({algo}, {protocol} at {size})</source>
            <translation>机器自选（{algo}，{size} 时用 {protocol}）</translation>
        </message>
        <message>
            <source>machine's choice ({algo} at {size})</source>
            <translation>机器自选（{size} 时用 {algo}）</translation>
        </message>
        <message>
            <source>{algo}: {machine} runs it by default</source>
            <translation>{algo}：{machine} 默认运行它</translation>
        </message>
        <message>
            <source>The machine's choice: {why}.</source>
            <translation>机器自己的选择：{why}。</translation>
        </message>
        <message>
            <source>Named mesh axes: every collective runs over one axis, in all its groups at once. The program's arrays are real; its collectives are timed as the real model's bytes.</source>
            <translation>命名的网格轴：每个集合通信沿一条轴进行，该轴的所有组同时运行。程序中的数组是真实的；集合通信按真实模型的字节计时。</translation>
        </message>
        <message>
            <source>TP needs n to divide the heads: 1, 2, 4 or 8. Each collective carries the model's real bytes; the GPUs compute between them.</source>
            <translation>TP 要求 n 整除注意力头数：1、2、4 或 8。每次集合通信搬运模型的真实字节数；两次通信之间 GPU 在计算。</translation>
        </message>
        <message>
            <source>Small matrices with real numbers; the collective is timed as if it moved S bytes.</source>
            <translation>小矩阵、真实数值；集合通信按搬运 S 字节计时。</translation>
        </message>
        <message>
            <source>Devices: a whole number from 1 to {max}</source>
            <translation>设备数：1 到 {max} 之间的整数</translation>
        </message>
        <message>
            <source>n must be a whole number from 1 to {max}; {v} is outside that range.</source>
            <translation>n 必须是 1 到 {max} 之间的整数；{v} 超出了这个范围。</translation>
        </message>
        <message>
            <source>&amp;Machine</source>
            <translation>机器(&amp;M)</translation>
        </message>
        <message>
            <source>Hierarchical (in node, across nodes, in node)</source>
            <translation>分层（节点内、跨节点、节点内）</translation>
        </message>
        <message>
            <source>NCCL rings, one channel per NIC</source>
            <translation>NCCL 环，每块网卡一个通道</translation>
        </message>
        <message>
            <source>Bidirectional rings per torus axis</source>
            <translation>环面每个轴上的双向环</translation>
        </message>
        <message>
            <source>One switch</source>
            <translation>一台交换机</translation>
        </message>
        <message>
            <source>One new token per sequence after {T} cached ones. Each collective carries the model's real bytes; the GPUs compute between them.</source>
            <translation>每个序列在 {T} 个已缓存词元之后生成一个新词元。每次集合通信都携带模型的真实字节数；GPU 在两次通信之间计算。</translation>
        </message>
        <message>
            <source>S is {S}: the nearest size under {asked} that splits into {n} equal whole-byte chunks.</source>
            <translation>S 为 {S}：不超过 {asked}、能均分成 {n} 个整字节块的最近大小。</translation>
        </message>
        <message>
            <source>its defaults, e.g. {example}</source>
            <translation>留空即默认值，例如 {example}</translation>
        </message>
        <message>
            <source>NAME=VALUE pairs apart by spaces; this program's parameters: {params}</source>
            <translation>以空格分隔的 名称=值；本程序的参数：{params}</translation>
        </message>
        <message>
            <source>n must be a whole number from 1 to {max}; {v} is not a whole number.</source>
            <translation>n 必须是 1 到 {max} 之间的整数；{v} 不是整数。</translation>
        </message>
        <message>
            <source>Case {k}: {name}</source>
            <translation>情形 {k}：{name}</translation>
        </message>
        <message>
            <source>the machine's own</source>
            <translation>机器自带的链路</translation>
        </message>
        <message>
            <source>{machine}, {shape} slice</source>
            <translation>{machine}，{shape} 切片</translation>
        </message>
        <message>
            <source>{machine} at n = {n}: a {shape} slice of it.</source>
            <translation>{machine} 在 n = {n} 时：用的是其中一个 {shape} 切片。</translation>
        </message>
        <message>
            <source>An opened run ({name}): {what}. Open a file or choose a scenario above to leave it.</source>
            <translation>打开的运行（{name}）：{what}。打开文件或在上面选择一个场景即可离开它。</translation>
        </message>
        <message>
            <source>from your code</source>
            <translation>来自你的代码</translation>
        </message>
    </context>
    <context>
        <name>DeckController</name>
        <message>
            <source>&amp;Deck</source>
            <translation>讲稿(&amp;D)</translation>
        </message>
        <message>
            <source>Deck</source>
            <translation>讲稿</translation>
        </message>
        <message>
            <source>&amp;Open deck…</source>
            <translation>打开讲稿(&amp;O)…</translation>
        </message>
        <message>
            <source>&amp;Add the current view as a scene</source>
            <translation>把当前画面加为一页(&amp;A)</translation>
        </message>
        <message>
            <source>&amp;Save deck…</source>
            <translation>保存讲稿(&amp;S)…</translation>
        </message>
        <message>
            <source>Export &amp;handout (PDF, PNGs)…</source>
            <translation>导出讲义（PDF、PNG）(&amp;H)…</translation>
        </message>
        <message>
            <source>Next step or scene</source>
            <translation>下一步或下一页</translation>
        </message>
        <message>
            <source>Previous step or scene</source>
            <translation>上一步或上一页</translation>
        </message>
        <message>
            <source>First scene</source>
            <translation>第一页</translation>
        </message>
        <message>
            <source>Last scene</source>
            <translation>最后一页</translation>
        </message>
        <message>
            <source>Present the deck from the first scene</source>
            <translation>从第一页开始放映讲稿</translation>
        </message>
        <message>
            <source>Present the deck from this scene</source>
            <translation>从当前页开始放映讲稿</translation>
        </message>
        <message>
            <source>Black screen</source>
            <translation>黑屏</translation>
        </message>
        <message>
            <source>White screen</source>
            <translation>白屏</translation>
        </message>
        <message>
            <source>Presenter view (talking points, next scene, time)</source>
            <translation>演讲者视图（要点、下一页、用时）</translation>
        </message>
        <message>
            <source>Type a scene number, then Enter, to jump to it</source>
            <translation>输入页码再按回车，跳到那一页</translation>
        </message>
        <message>
            <source>Jump to the scene number typed</source>
            <translation>跳到输入的页码</translation>
        </message>
        <message>
            <source>No scene of this deck can open: {why}</source>
            <translation>这份讲稿没有一页能打开：{why}</translation>
        </message>
        <message>
            <source>Skipped: {why}</source>
            <translation>已跳过：{why}</translation>
        </message>
        <message>
            <source>Scene {k}…</source>
            <translation>第 {k} 页…</translation>
        </message>
        <message>
            <source>{name} is in Shard Lab's own folder, which holds the lecture as shipped: save your deck in another folder, such as Documents.</source>
            <translation>{name} 在 Shard Lab 自己的文件夹里，那里存放随程序发布的讲稿：请把你的讲稿保存到别的文件夹，例如“文档”。</translation>
        </message>
        <message>
            <source>Saved {path}</source>
            <translation>已保存 {path}</translation>
        </message>
        <message>
            <source>{name} (copy).json</source>
            <translation>{name}（副本）.json</translation>
        </message>
        <message>
            <source>You added {k} scene(s) to the deck “{title}” and did not save them.</source>
            <translation>你向讲稿“{title}”添加了 {k} 页，还没有保存。</translation>
        </message>
        <message>
            <source>Save them first?</source>
            <translation>先保存吗？</translation>
        </message>
        <message>
            <source>Open deck</source>
            <translation>打开讲稿</translation>
        </message>
        <message>
            <source>Shard Lab decks (*.json);;All files (*)</source>
            <translation>Shard Lab 讲稿 (*.json);;所有文件 (*)</translation>
        </message>
        <message>
            <source>Add the current view as a scene</source>
            <translation>把当前画面加为一页</translation>
        </message>
        <message>
            <source>Scene title:</source>
            <translation>这一页的标题：</translation>
        </message>
        <message>
            <source>There is no deck to save: add the current view as a scene first.</source>
            <translation>没有可保存的讲稿：请先把当前画面加为一页。</translation>
        </message>
        <message>
            <source>Save deck</source>
            <translation>保存讲稿</translation>
        </message>
        <message>
            <source>Shard Lab decks (*.json)</source>
            <translation>Shard Lab 讲稿 (*.json)</translation>
        </message>
        <message>
            <source>Open a deck first: the handout has one page per scene.</source>
            <translation>请先打开讲稿：讲义每一页对应讲稿的一页。</translation>
        </message>
        <message>
            <source>PDF, A4 (*.pdf)</source>
            <translation>PDF，A4 (*.pdf)</translation>
        </message>
        <message>
            <source>PDF, US Letter (*.pdf)</source>
            <translation>PDF，美式信纸 (*.pdf)</translation>
        </message>
        <message>
            <source>Numbered PNGs (*.png)</source>
            <translation>编号的 PNG (*.png)</translation>
        </message>
        <message>
            <source>Export handout</source>
            <translation>导出讲义</translation>
        </message>
        <message>
            <source>Deck: scene {k}/{n}</source>
            <translation>讲稿：第 {k}/{n} 页</translation>
        </message>
    </context>
    <context>
        <name>DeckFile</name>
        <message>
            <source>"note" must be text.</source>
            <translation>"note" 必须是文本。</translation>
        </message>
        <message>
            <source>"scenes" must be a list of 1 to %1 scenes.</source>
            <translation>"scenes" 必须是包含 1 到 %1 页的列表。</translation>
        </message>
        <message>
            <source>%1 is not a deck file: it is %2 bytes, a deck is under %3.</source>
            <translation>%1 不是讲稿文件：它有 %2 字节，讲稿小于 %3 字节。</translation>
        </message>
        <message>
            <source>%1 is not a deck file: it is not UTF-8 text.</source>
            <translation>%1 不是讲稿文件：它不是 UTF-8 文本。</translation>
        </message>
        <message>
            <source>%1: "%2" must be a text of at most %3 characters.</source>
            <translation>%1："%2" 必须是不超过 %3 个字符的文本。</translation>
        </message>
        <message>
            <source>%1: "%2" must be an object with "en" (and "zh") texts.</source>
            <translation>%1："%2" 必须是含 "en"（和 "zh"）文本的对象。</translation>
        </message>
        <message>
            <source>Cannot read %1: %2.</source>
            <translation>无法读取 %1：%2。</translation>
        </message>
        <message>
            <source>Deck file version %1 is not supported: this Shard Lab reads version %2.</source>
            <translation>不支持第 %1 版讲稿文件：此 Shard Lab 读取第 %2 版。</translation>
        </message>
        <message>
            <source>Scene %1 (%2) cannot open: %3</source>
            <translation>第 %1 页（%2）无法打开：%3</translation>
        </message>
        <message>
            <source>Scene %1 (%2): the %3 view is not available here.</source>
            <translation>第 %1 页（%2）：这里没有 %3 视图。</translation>
        </message>
        <message>
            <source>Scene %1 must be an object.</source>
            <translation>第 %1 页必须是一个对象。</translation>
        </message>
        <message>
            <source>Scene %1: "file" must name a scenario file.</source>
            <translation>第 %1 页："file" 必须指向一个场景文件。</translation>
        </message>
        <message>
            <source>Scene %1: "id" must be a short text.</source>
            <translation>第 %1 页："id" 必须是简短文本。</translation>
        </message>
        <message>
            <source>Scene %1: "points" must be a list of %2 to %3 talking points.</source>
            <translation>第 %1 页："points" 必须是 %2 到 %3 条要点的列表。</translation>
        </message>
        <message>
            <source>Scene %1: "scenario" must be an object.</source>
            <translation>第 %1 页："scenario" 必须是一个对象。</translation>
        </message>
        <message>
            <source>Scene %1: "step" must be a whole number &gt;= 0.</source>
            <translation>第 %1 页："step" 必须是 &gt;= 0 的整数。</translation>
        </message>
        <message>
            <source>Scene %1: "tab" must be one of %2, not %3.</source>
            <translation>第 %1 页："tab" 必须是 %2 之一，而不是 %3。</translation>
        </message>
        <message>
            <source>Scene %1: "walk" must be true or false.</source>
            <translation>第 %1 页："walk" 必须是 true 或 false。</translation>
        </message>
        <message>
            <source>Scene %1: unknown field %2.</source>
            <translation>第 %1 页：未知字段 %2。</translation>
        </message>
        <message>
            <source>The deck file has no valid "version".</source>
            <translation>讲稿文件没有有效的 "version"。</translation>
        </message>
        <message>
            <source>There is no built-in deck %1.</source>
            <translation>没有名为 %1 的内置讲稿。</translation>
        </message>
        <message>
            <source>This is not a Shard Lab deck file (its "schema" is not "%1").</source>
            <translation>这不是 Shard Lab 讲稿文件（它的 "schema" 不是 "%1"）。</translation>
        </message>
        <message>
            <source>This is not a deck file: it is not valid JSON (line %1, column %2).</source>
            <translation>这不是讲稿文件：它不是有效的 JSON（第 %1 行，第 %2 列）。</translation>
        </message>
        <message>
            <source>This is not a deck file: its JSON is nested far too deeply.</source>
            <translation>这不是讲稿文件：它的 JSON 嵌套过深。</translation>
        </message>
        <message>
            <source>Unknown field %1 in the deck file.</source>
            <translation>讲稿文件中有未知字段 %1。</translation>
        </message>
        <message>
            <source>scene %1</source>
            <translation>第 %1 页</translation>
        </message>
        <message>
            <source>the deck</source>
            <translation>讲稿</translation>
        </message>
        <message>
            <source>%1 is not a saved run (a trace file).</source>
            <translation>%1 不是保存的运行（轨迹文件）。</translation>
        </message>
        <message>
            <source>Scene %1 must have one of a "scenario", a "file" or a "run".</source>
            <translation>第 %1 个场景必须有 "scenario"、"file" 或 "run" 之一。</translation>
        </message>
        <message>
            <source>Scene %1: "run" must name a saved run (a trace file).</source>
            <translation>第 %1 个场景："run" 必须指明一个保存的运行（轨迹文件）。</translation>
        </message>
        <message>
            <source>there is no saved run %1 beside the deck.</source>
            <translation>讲稿旁边没有保存的运行 %1。</translation>
        </message>
        <message>
            <source>Scene %1: "at" must be a number above 0 and at most 1 (how far into the step).</source>
            <translation>第 %1 页："at" 必须是大于 0、至多为 1 的数（在这一步中走到多远）。</translation>
        </message>
    </context>
    <context>
        <name>Explain</name>
        <message>
            <source>Every GPU d sends one chunk of {size} to its ring neighbour d + 1.</source>
            <translation>每块 GPU d 把一块 {size} 的数据发给环上的邻居 d + 1。</translation>
        </message>
        <message>
            <source>Every GPU d sends {what} ({size}) to GPU d + {j}.</source>
            <translation>每块 GPU d 把{what}（{size}）发给 GPU d + {j}。</translation>
        </message>
        <message>
            <source>Every GPU sends its own copy of {what} ({size}) up into the switch, which adds the {k} copies as they arrive.</source>
            <translation>每块 GPU 把自己的{what}（{size}）发进交换机，交换机把到达的 {k} 份数据相加。</translation>
        </message>
        <message>
            <source>In-network all-reduce (NVLS)</source>
            <translation>网内归约 all-reduce（NVLS）</translation>
        </message>
        <message>
            <source>Recursive-doubling all-reduce</source>
            <translation>递归倍增 all-reduce</translation>
        </message>
        <message>
            <source>Ring all-gather</source>
            <translation>环形 all-gather</translation>
        </message>
        <message>
            <source>Ring all-reduce</source>
            <translation>环形 all-reduce</translation>
        </message>
        <message>
            <source>Ring reduce-scatter</source>
            <translation>环形 reduce-scatter</translation>
        </message>
        <message>
            <source>The switch multicasts the finished sum of {what} ({size}) down to all {k} GPUs at once.</source>
            <translation>交换机把{what}的最终和（{size}）一次性组播给全部 {k} 块 GPU。</translation>
        </message>
        <message>
            <source>chunk {c}</source>
            <translation>第 {c} 块</translation>
        </message>
        <message>
            <source>the summed chunks</source>
            <translation>求和后的各块</translation>
        </message>
        <message>
            <source>the switch</source>
            <translation>交换机</translation>
        </message>
        <message>
            <source>the whole buffer</source>
            <translation>整个缓冲区</translation>
        </message>
        <message>
            <source>their chunks</source>
            <translation>各自的块</translation>
        </message>
        <message>
            <source>{pattern} {examples} … and {k} more.</source>
            <translation>{pattern} {examples} … 还有 {k} 条。</translation>
        </message>
        <message>
            <source>{pattern} {examples}.</source>
            <translation>{pattern} {examples}。</translation>
        </message>
        <message>
            <source> … and {k} more</source>
            <translation> … 另有 {k} 条</translation>
        </message>
        <message>
            <source>All n − 1 copies are issued at once: α is paid once while the port streams (n − 1)·S bytes. Fast for small S, slow for large S.</source>
            <translation>n − 1 份副本同时发出：α 只付一次，端口则连续传送 (n − 1)·S 字节。S 小时快，S 大时慢。</translation>
        </message>
        <message>
            <source>Each round adds what the last round summed, so α is paid once per round, with all S bytes.</source>
            <translation>每一轮都要加上上一轮求得的和，所以每轮付一次 α，每次都传全部 S 字节。</translation>
        </message>
        <message>
            <source>Each step needs the chunk the step before delivered, so α is paid at every step.</source>
            <translation>每一步都要用上一步送到的块，所以每一步都要付一次 α。</translation>
        </message>
        <message>
            <source>Every GPU d sends its own chunk d ({size}) straight to GPU d + {j}.</source>
            <translation>每块 GPU d 把自己的第 d 块（{size}）直接发给 GPU d + {j}。</translation>
        </message>
        <message>
            <source>Every GPU d sends its part of chunk d + {j} ({size}) straight to that chunk's owner, GPU d + {j}.</source>
            <translation>每块 GPU d 把自己那份第 d + {j} 块（{size}）直接发给这一块的归属者 GPU d + {j}。</translation>
        </message>
        <message>
            <source>Every message is issued at once: α is paid once while each port streams its bytes.</source>
            <translation>所有消息同时发出：α 只付一次，各端口连续传送各自的字节。</translation>
        </message>
        <message>
            <source>In-network (NVLS/SHARP): the switch adds the chunks and multicasts the sum.</source>
            <translation>网内归约（NVLS/SHARP）：交换机把各块相加，再把和组播回去。</translation>
        </message>
        <message>
            <source>One-shot all-gather</source>
            <translation>一步式（one-shot）all-gather</translation>
        </message>
        <message>
            <source>One-shot reduce-scatter</source>
            <translation>一步式（one-shot）reduce-scatter</translation>
        </message>
        <message>
            <source>One-shot: every GPU sends each chunk straight to the GPU that owns it, all at once.</source>
            <translation>一步式：每块 GPU 把每一块直接发给拥有它的 GPU，同时发出。</translation>
        </message>
        <message>
            <source>One-shot: every GPU sends its chunk straight to every other GPU, all at once.</source>
            <translation>一步式：每块 GPU 把自己的块直接发给其他每块 GPU，同时发出。</translation>
        </message>
        <message>
            <source>One-shot: every GPU sends its whole buffer to every other GPU at once; each port carries (n − 1)·S.</source>
            <translation>一步式：每块 GPU 同时把整个缓冲区发给其他每块 GPU；每个端口要传 (n − 1)·S。</translation>
        </message>
        <message>
            <source>Recursive doubling: log₂ n rounds; partners d and d XOR 2^k swap the whole buffer.</source>
            <translation>递归倍增：log₂ n 轮；d 与 d XOR 2^k 两两交换整个缓冲区。</translation>
        </message>
        <message>
            <source>Ring: reduce-scatter then all-gather, 2(n − 1) steps of S/n bytes.</source>
            <translation>ring（环形）：先 reduce-scatter 再 all-gather，2(n − 1) 步，每步 S/n 字节。</translation>
        </message>
        <message>
            <source>S must split into n equal chunks.</source>
            <translation>S 必须能均分成 n 块。</translation>
        </message>
        <message>
            <source>The chunks stream up and back down without waiting for each other: α is paid once up and once down.</source>
            <translation>各块连续地上行、再下行，彼此不等待：上行付一次 α，下行再付一次。</translation>
        </message>
        <message>
            <source>Two phases, each issued at once: α is paid twice, and each port carries the ring's 2(n − 1)/n·S bytes.</source>
            <translation>两个阶段，每个阶段的消息同时发出：α 付两次，每个端口传的字节与环形相同，为 2(n − 1)/n·S。</translation>
        </message>
        <message>
            <source>Two-shot all-reduce</source>
            <translation>两步式（two-shot）all-reduce</translation>
        </message>
        <message>
            <source>Two-shot: each chunk goes straight to its owner, which adds them and sends the sum to all.</source>
            <translation>两步式：每一块直接发给它的归属者，归属者求和后再把和发给所有 GPU。</translation>
        </message>
        <message>
            <source>in-network (innet, NVLS)</source>
            <translation>网内归约（innet，NVLS）</translation>
        </message>
        <message>
            <source>one-shot (direct)</source>
            <translation>一步式（direct）</translation>
        </message>
        <message>
            <source>recursive doubling (rd)</source>
            <translation>递归倍增（rd）</translation>
        </message>
        <message>
            <source>ring</source>
            <translation>ring（环形）</translation>
        </message>
        <message>
            <source>two-shot</source>
            <translation>两步式（two-shot）</translation>
        </message>
        <message>
            <source>One-shot all-reduce</source>
            <translation>一步式（one-shot）all-reduce</translation>
        </message>
        <message>
            <source>Every GPU computes: {op} ({where})</source>
            <translation>每块 GPU 都在计算：{op}（{where}）</translation>
        </message>
        <message>
            <source>LM head</source>
            <translation>LM head</translation>
        </message>
        <message>
            <source>QKV</source>
            <translation>QKV</translation>
        </message>
        <message>
            <source>after the layers</source>
            <translation>各层之后</translation>
        </message>
        <message>
            <source>attention</source>
            <translation>注意力</translation>
        </message>
        <message>
            <source>compute-bound</source>
            <translation>算力受限</translation>
        </message>
        <message>
            <source>down</source>
            <translation>down</translation>
        </message>
        <message>
            <source>final norm</source>
            <translation>最终归一化</translation>
        </message>
        <message>
            <source>g @ W_down rows: a partial sum the all-reduce completes</source>
            <translation>g @ W_down 的行：一个部分和，由 all-reduce 补全</translation>
        </message>
        <message>
            <source>gate/up</source>
            <translation>gate/up</translation>
        </message>
        <message>
            <source>h @ W_lm: the logits of its share of the vocabulary</source>
            <translation>h @ W_lm：它负责的那部分词表的 logits</translation>
        </message>
        <message>
            <source>h @ [W_gate | W_up], its columns of d_ff, and SwiGLU</source>
            <translation>h @ [W_gate | W_up]：它那部分 d_ff 列，再做 SwiGLU</translation>
        </message>
        <message>
            <source>h @ [Wq | Wk | Wv]: the queries of its heads, the keys and values of its KV groups, RoPE</source>
            <translation>h @ [Wq | Wk | Wv]：它那几个头的 query、它那几个 KV 组的 key 和 value，再做 RoPE</translation>
        </message>
        <message>
            <source>layer {i}</source>
            <translation>第 {i} 层</translation>
        </message>
        <message>
            <source>memory-bound</source>
            <translation>显存带宽受限</translation>
        </message>
        <message>
            <source>norm</source>
            <translation>归一化</translation>
        </message>
        <message>
            <source>o @ Wo rows of its heads: a partial sum the all-reduce completes</source>
            <translation>o @ Wo 中它那几个头的行：一个部分和，由 all-reduce 补全</translation>
        </message>
        <message>
            <source>out proj</source>
            <translation>输出投影</translation>
        </message>
        <message>
            <source>residual add and RMSNorm of the stream before attention</source>
            <translation>注意力之前：残差相加并做 RMSNorm</translation>
        </message>
        <message>
            <source>residual add and RMSNorm of the stream before the MLP</source>
            <translation>MLP 之前：残差相加并做 RMSNorm</translation>
        </message>
        <message>
            <source>softmax(q·Kᵀ)·V over the keys so far, for its heads only</source>
            <translation>只对它自己的头，在已有的 key 上算 softmax(q·Kᵀ)·V</translation>
        </message>
        <message>
            <source>the last RMSNorm</source>
            <translation>最后一次 RMSNorm</translation>
        </message>
        <message>
            <source>{t} = max({f} FLOP / {P}, {b} / {B}) on the {chip}: {bound}.</source>
            <translation>{t} = max({f} FLOP / {P}, {b} / {B})，在 {chip} 上：{bound}。</translation>
        </message>
        <message>
            <source>along the torus links, neighbour to neighbour ({link}, {bw} each way, α {a})</source>
            <translation>沿环面链路，邻居到邻居（{link}，每个方向 {bw}，α {a}）</translation>
        </message>
        <message>
            <source>inside the nodes, over {link} ({bw}, α {a})</source>
            <translation>节点内，经 {link}（{bw}，α {a}）</translation>
        </message>
        <message>
            <source>inter-node, over {link} ({bw} each way, α {a})</source>
            <translation>跨节点，经 {link}（每个方向 {bw}，α {a}）</translation>
        </message>
        <message>
            <source>{k} of {K} messages inter-node, over {link} ({bw}, α {a}); the rest inside the nodes, over {intra} ({bw_in})</source>
            <translation>{K} 条消息中 {k} 条跨节点，经 {link}（{bw}，α {a}）；其余在节点内，经 {intra}（{bw_in}）</translation>
        </message>
        <message>
            <source>Each GPU d exchanges a chunk ({size}) with GPU d + {P} on the other node (GPU d − {P} for the GPUs of node 1), over its own NIC: the same local rank on both nodes.</source>
            <translation>每块 GPU d 与另一节点上的 GPU d + {P}（节点 1 的 GPU 则是 GPU d − {P}）交换一块数据（{size}），各走自己的 NIC：两个节点上相同的本地序号互相配对。</translation>
        </message>
        <message>
            <source>Each GPU d sends a chunk ({size}) to GPU d + {P}, its own local rank on the next node, over its own NIC (the last node sends to node 0).</source>
            <translation>每块 GPU d 经自己的 NIC 把一块数据（{size}）发给 GPU d + {P}，即下一个节点上相同本地序号的 GPU（最后一个节点发给节点 0）。</translation>
        </message>
        <message>
            <source>Each GPU sends a chunk ({size}) to the GPU of its own local rank on another node, over its own NIC.</source>
            <translation>每块 GPU 经自己的 NIC 把一块数据（{size}）发给另一节点上相同本地序号的 GPU。</translation>
        </message>
        <message>
            <source>All-to-all: GPU d sends its block j straight to GPU j; here all n − 1 blocks at once.</source>
            <translation>All-to-all：GPU d 把自己的第 j 块直接发给 GPU j；这里 n − 1 块同时发出。</translation>
        </message>
        <message>
            <source>All-to-all: GPU d sends its block j to GPU j; in round k, d sends to d + k and hears from d − k.</source>
            <translation>All-to-all：GPU d 把自己的第 j 块发给 GPU j；第 k 轮中 d 发给 d + k，并从 d − k 接收。</translation>
        </message>
        <message>
            <source>Each round is an exchange both partners wait for, so α is paid in each of the n − 1 rounds.</source>
            <translation>每一轮都是双方都要等待的交换，所以 n − 1 轮中每一轮都要付一次 α。</translation>
        </message>
        <message>
            <source>Every GPU d sends its block d + {j} ({size}) straight to the GPU it belongs to, GPU d + {j}.</source>
            <translation>每块 GPU d 把自己的第 d + {j} 块（{size}）直接发给它的归属者 GPU d + {j}。</translation>
        </message>
        <message>
            <source>Every block is issued at once: α is paid once while each port streams (n − 1)/n·S bytes.</source>
            <translation>所有数据块同时发出：α 只付一次，每个端口依次传送 (n − 1)/n·S 字节。</translation>
        </message>
        <message>
            <source>One-shot all-to-all</source>
            <translation>一步式（one-shot）all-to-all</translation>
        </message>
        <message>
            <source>Pairwise-exchange all-to-all</source>
            <translation>成对交换（pairwise）all-to-all</translation>
        </message>
        <message>
            <source>pairwise exchange</source>
            <translation>成对交换（pairwise）</translation>
        </message>
        <message>
            <source>{k} blocks of {size}, each straight to the GPU it belongs to.</source>
            <translation>{k} 个 {size} 的数据块，各自直接发给它所属的 GPU。</translation>
        </message>
        <message>
            <source>{src} → {dst}: its block {j}</source>
            <translation>{src} → {dst}：它的第 {j} 块</translation>
        </message>
        <message>
            <source>GPUs pair up {k} apart, d ↔ d XOR {k} (0 ↔ {k}, 1 ↔ {k1}, …), and swap {what} ({size}).</source>
            <translation>GPU 两两配对，相隔 {k}：d ↔ d XOR {k}（0 ↔ {k}，1 ↔ {k1}，…），互换{what}（{size}）。</translation>
        </message>
        <message>
            <source>Last, GPU d − {p} sends the finished sum ({size}) back to each of the {gpus} that folded in.</source>
            <translation>最后，GPU d − {p} 把算好的总和（{size}）发回给先前并入的 {gpus}。</translation>
        </message>
        <message>
            <source>Neighbours pair up, d ↔ d XOR 1 (0 ↔ 1, 2 ↔ 3, …), and swap {what} ({size}).</source>
            <translation>相邻的 GPU 两两配对，d ↔ d XOR 1（0 ↔ 1，2 ↔ 3，…），互换{what}（{size}）。</translation>
        </message>
        <message>
            <source>n = {n} is not a power of two: first the {gpus} numbered {p} and up hand their whole buffer ({size}) to GPU d − {p}, which adds it in.</source>
            <translation>n = {n} 不是 2 的幂：先由编号 {p} 及以上的 {gpus} 把整个缓冲区（{size}）交给 GPU d − {p}，由它加进去。</translation>
        </message>
        <message>
            <source>{messages} of {size}.</source>
            <translation>{messages}，每条 {size}。</translation>
        </message>
        <message>
            <source>Both directions of every link carry data: about half the ring's time on each axis.</source>
            <translation>每条链路的两个方向都在传数据：每个轴上约为单向环时间的一半。</translation>
        </message>
        <message>
            <source>Every step waits for the slowest hop, the one through a NIC; one ring per NIC keeps every NIC busy.</source>
            <translation>每一步都要等最慢的一跳，也就是经过网卡的那一跳；每块网卡一个环，让所有网卡都在工作。</translation>
        </message>
        <message>
            <source>Hierarchical all-reduce</source>
            <translation>分层 all-reduce</translation>
        </message>
        <message>
            <source>NCCL's channel rings: one ring per NIC through every GPU of every node.</source>
            <translation>NCCL 的通道环：每块网卡一个环，经过每个节点的每块 GPU。</translation>
        </message>
        <message>
            <source>Ring all-gather across nodes</source>
            <translation>跨节点的 ring all-gather</translation>
        </message>
        <message>
            <source>Ring all-reduce across nodes</source>
            <translation>跨节点的 ring all-reduce</translation>
        </message>
        <message>
            <source>Ring reduce-scatter across nodes</source>
            <translation>跨节点的 ring reduce-scatter</translation>
        </message>
        <message>
            <source>Torus all-gather</source>
            <translation>Torus all-gather</translation>
        </message>
        <message>
            <source>Torus all-reduce</source>
            <translation>Torus all-reduce</translation>
        </message>
        <message>
            <source>Torus reduce-scatter</source>
            <translation>Torus reduce-scatter</translation>
        </message>
        <message>
            <source>Torus: bidirectional rings along each axis in turn, on a part of the array per axis.</source>
            <translation>Torus：依次沿每个轴做双向环，每个轴处理数组的一部分。</translation>
        </message>
        <message>
            <source>bidirectional rings per torus axis</source>
            <translation>每个 torus 轴上的双向环</translation>
        </message>
        <message>
            <source>channel rings (NCCL)</source>
            <translation>通道环（NCCL）</translation>
        </message>
        <message>
            <source>hierarchical</source>
            <translation>分层</translation>
        </message>
        <message>
            <source>Hierarchical, pipelined as NCCL does: reduce-scatter inside each node, all-reduce across nodes on every GPU's own NIC, all-gather inside each node — chunk by chunk (up to 16 chunks of at least 2 MiB), chunk c + 1 inside the node while chunk c crosses the network.</source>
            <translation>分层，像 NCCL 那样流水线化：先在每个节点内做 reduce-scatter，再经每块 GPU 自己的网卡跨节点做 all-reduce，最后在每个节点内做 all-gather——按块进行（最多 16 块，每块至少 2 MiB），第 c 块穿过网络时，第 c + 1 块已在节点内进行。</translation>
        </message>
        <message>
            <source>Only 1/P of the data crosses the network, on all P NICs of a node at once; one call, and the network's time hides behind the node's phases.</source>
            <translation>只有 1/P 的数据穿过网络，而且节点的 P 块网卡同时在传；只调用一次，网络的时间藏在节点内各阶段后面。</translation>
        </message>
        <message>
            <source>Tree all-reduce</source>
            <translation>Tree all-reduce（树形）</translation>
        </message>
        <message>
            <source>tree (NCCL)</source>
            <translation>树（NCCL）</translation>
        </message>
        <message>
            <source>α is paid along the chain and once per tree level: the latency grows with log₂ of the nodes, not with the GPU count.</source>
            <translation>α 沿链逐跳支付，树的每一层再付一次：延迟随节点数的 log₂ 增长，而不随 GPU 数增长。</translation>
        </message>
        <message>
            <source>NCCL's Tree: partial sums run along a chain inside each node, up a double binary tree across the nodes, and the total comes back down; half the buffer through each tree.</source>
            <translation>NCCL 的 Tree：部分和沿节点内的链传递，沿跨节点的双二叉树向上归约，总和再原路返回；两棵树各承担一半缓冲区。</translation>
        </message>
        <message>
            <source>Across the nodes each child's tree GPU sends its subtree's sum ({size}) up to its parent node, over its NIC.</source>
            <translation>跨节点时，每个子节点的树 GPU 经自己的网卡把其子树的和（{size}）发给父节点。</translation>
        </message>
        <message>
            <source>Along each node's chain every GPU passes its partial sum ({size}) to the next GPU, which adds its own.</source>
            <translation>在每个节点的链上，每块 GPU 把部分和（{size}）传给下一块 GPU，后者加上自己的数据。</translation>
        </message>
        <message>
            <source>Inside each node the total runs back along the chain ({size} a hop).</source>
            <translation>在每个节点内，总和沿链原路传回（每跳 {size}）。</translation>
        </message>
        <message>
            <source>The total goes back down the tree: each parent node sends it ({size}) to its child nodes.</source>
            <translation>总和沿树向下传回：每个父节点把它（{size}）发给子节点。</translation>
        </message>
        <message>
            <source>along the slice's links, neighbour to neighbour ({link}, {bw} each way, α {a})</source>
            <translation>沿切片的链路，邻居到邻居（{link}，每个方向 {bw}，α {a}）</translation>
        </message>
        <message>
            <source>Timed as NCCL runs {algo} with {protocol}: {base} start-up, then {bw} effective across nodes and {bw_in} inside a node, with no latency per step (NCCL's model counts it in the start-up).</source>
            <translation>计时按 NCCL 用 {protocol} 运行 {algo}：先是 {base} 的启动延迟，之后跨节点有效带宽 {bw}、节点内 {bw_in}，每一步不再另计延迟（NCCL 的模型把它算进启动延迟）。</translation>
        </message>
        <message>
            <source>Timed as NCCL runs {algo} with {protocol}: {bw} and α {a} per step across nodes, {bw_in} and α {a_in} inside a node, after a {base} start-up.</source>
            <translation>计时按 NCCL 用 {protocol} 运行 {algo}：{base} 的启动延迟之后，跨节点每步 {bw}、α {a}，节点内 {bw_in}、α {a_in}。</translation>
        </message>
    </context>
    <context>
        <name>ExplainPanel</name>
        <message>
            <source>Explanation</source>
            <translation>讲解</translation>
        </message>
        <message>
            <source>t = {t} · moved so far: {b}</source>
            <translation>t = {t} · 已传输：{b}</translation>
        </message>
        <message>
            <source>Nothing is sent in this scenario.</source>
            <translation>这个场景不需要通信。</translation>
        </message>
        <message>
            <source>Collective {i} of {N}: {label} — {what}</source>
            <translation>第 {i} / {N} 次集合通信：{label} — {what}</translation>
        </message>
        <message>
            <source>One device: it already holds everything, nothing is sent.</source>
            <translation>只有一个设备：它已经拥有全部数据，无需发送。</translation>
        </message>
        <message>
            <source>done</source>
            <translation>已完成</translation>
        </message>
        <message>
            <source>next</source>
            <translation>即将开始</translation>
        </message>
        <message>
            <source>in progress</source>
            <translation>进行中</translation>
        </message>
        <message>
            <source>Step {k} of {K} — {state}</source>
            <translation>第 {k} / {K} 步 — {state}</translation>
        </message>
        <message>
            <source>Step {k} of {K} ({phase}) — {state}</source>
            <translation>第 {k} / {K} 步（{phase}）— {state}</translation>
        </message>
        <message>
            <source>Phase {k} of {K}: {phase} — {state}</source>
            <translation>第 {k} / {K} 阶段：{phase} — {state}</translation>
        </message>
        <message>
            <source>One message</source>
            <translation>一条消息</translation>
        </message>
        <message>
            <source>Running total</source>
            <translation>累计</translation>
        </message>
        <message>
            <source>{t} after {k} of {K} steps</source>
            <translation>完成 {k} / {K} 步，用时 {t}</translation>
        </message>
        <message>
            <source>Closed form</source>
            <translation>解析公式</translation>
        </message>
        <message>
            <source>{T} with n = {n}, S = {S}</source>
            <translation>{T}（n = {n}，S = {S}）</translation>
        </message>
        <message>
            <source>simulated: {t}</source>
            <translation>模拟：{t}</translation>
        </message>
        <message>
            <source>Bus bandwidth (nccl-tests): {bw} of {link} per port</source>
            <translation>总线带宽（nccl-tests 口径）：{bw}，每端口链路带宽 {link}</translation>
        </message>
        <message>
            <source>The switch's adders build the sum in the network: no GPU spends time adding.</source>
            <translation>交换机里的加法器在网络中完成求和：GPU 不花时间做加法。</translation>
        </message>
        <message>
            <source>The receiver stores it, no arithmetic: GPU {d} collects block {d} of every GPU, in GPU order; GPU {s}'s goes to position {s}.</source>
            <translation>接收方直接存下，不做运算：GPU {d} 按 GPU 编号顺序收集每块 GPU 的第 {d} 块；来自 GPU {s} 的放在第 {s} 个位置。</translation>
        </message>
        <message>
            <source>The receiver stores a copy: the payload is already the full sum of all {n} GPUs.</source>
            <translation>接收方直接保存副本：这份数据已经是全部 {n} 块 GPU 的完整和。</translation>
        </message>
        <message>
            <source>The receiver stores a copy (no arithmetic).</source>
            <translation>接收方直接保存副本（不做运算）。</translation>
        </message>
        <message>
            <source>The receiver adds it to its own buffer: afterwards {gpu} holds the sum of {k} of {n} GPUs' data.</source>
            <translation>接收方把它加到自己的缓冲区：之后 {gpu} 持有 {n} 块 GPU 中 {k} 块数据的和。</translation>
        </message>
        <message>
            <source>The receiver adds it to its own partial sum: afterwards {gpu}'s chunk {c} sums {k} of {n} GPUs' data.</source>
            <translation>接收方把它加到自己的部分和上：之后 {gpu} 的第 {c} 块是 {n} 块 GPU 中 {k} 块数据的和。</translation>
        </message>
        <message>
            <source>decode step</source>
            <translation>decode 一步</translation>
        </message>
        <message>
            <source>forward</source>
            <translation>前向</translation>
        </message>
        <message>
            <source>Whole {what}: {T} on GPU 0 — {C} computing ({k} ops: norms, QKV, attention, out proj, gate/up, down, LM head), {M} in {N} collectives (2 all-reduces per layer × {L} layers + the logits all-gather), each with the model's real bytes.</source>
            <translation>整个{what}：GPU 0 上共 {T} —— 计算 {C}（{k} 个算子：归一化、QKV、注意力、输出投影、gate/up、down、LM head），{N} 次集合通信用了 {M}（每层 2 次 all-reduce × {L} 层 + logits 的 all-gather），每次都搬运模型的真实字节数。</translation>
        </message>
        <message>
            <source>Communication takes {r:.0f}× as long as computing: the lecture model is tiny, so an op reads a few KiB in nanoseconds while every ring step pays α = {a}. A real model's ops take microseconds: click a point of the decode-latency plot to see one step of it.</source>
            <translation>通信用时是计算的 {r:.0f} 倍：讲义里的模型很小，一个算子只读几 KiB，几纳秒就完成，而环上的每一步都要付 α = {a}。真实模型的算子要花微秒级时间：在解码延迟图上点一个点，就能看到它的一步。</translation>
        </message>
        <message>
            <source>Whole {what}: {N} collectives — 2 all-reduces per layer × {L} layers + the logits all-gather — {T} of communication.</source>
            <translation>整个{what}：{N} 次集合通信 — 每层 2 次 all-reduce × {L} 层 + logits 的 all-gather — 通信共 {T}。</translation>
        </message>
        <message>
            <source>max |TP − single| = {d:.1e}: the sharded model computes the same logits.</source>
            <translation>max |TP − 单卡| = {d:.1e}：切分后的模型算出的 logits 与单卡相同。</translation>
        </message>
        <message>
            <source>Case 1: {A} · {B} → {C}. The contracted dimension J is not split, so every GPU multiplies its own rows of A by all of B. No communication.</source>
            <translation>情形 1：{A} · {B} → {C}。被求和的维度 J 没被切，所以每块 GPU 用自己的 A 的行乘完整的 B。无需通信。</translation>
        </message>
        <message>
            <source>Case 2: {A} · {B}. A is split along the contracted J: all-gather A first, then every GPU multiplies all of A by B. Result: {C} on every GPU.</source>
            <translation>情形 2：{A} · {B}。A 沿被求和的维度 J 切分：先 all-gather A，再由每块 GPU 用完整的 A 乘 B。结果：每块 GPU 都有 {C}。</translation>
        </message>
        <message>
            <source>Case 3: {A} · {B}. Both are split along the contracted J: every GPU computes a full-size partial sum of C, then an all-reduce adds them. Result: {C} on every GPU.</source>
            <translation>情形 3：{A} · {B}。两者都沿被求和的维度 J 切分：每块 GPU 算出 C 的一个完整大小的部分和，再用 all-reduce 相加。结果：每块 GPU 都有 {C}。</translation>
        </message>
        <message>
            <source>Case 4: {A} · {B}. Both non-contracted dimensions are split: GPU d could only compute a diagonal block, so all-gather B first (it becomes case 1). Result: {C}.</source>
            <translation>情形 4：{A} · {B}。两个非求和维度都被切分：GPU d 只能算出一个对角块，所以先 all-gather B（变成情形 1）。结果：{C}。</translation>
        </message>
        <message>
            <source>max |C − A·B| over every GPU = {e:.1e}</source>
            <translation>所有 GPU 上 max |C − A·B| = {e:.1e}</translation>
        </message>
        <message>
            <source>This step: {d} on the clock ({a} → {b}); {m} messages. A port passes one message's bytes at a time; each message lands α after it starts streaming.</source>
            <translation>这一步：用时 {d}（{a} → {b}）；共 {m} 条消息。一个端口同一时刻只传一条消息的字节；每条消息在开始传送后再过 α 才到达。</translation>
        </message>
        <message>
            <source>Make your prediction first: what this step sends, and to whom, is shown once you have answered (or skipped) in the panel “Predict, then reveal”.</source>
            <translation>请先做出预测：这一步发送什么、发给谁，在你于“先预测，再揭晓”面板中作答（或跳过）之后才会显示。</translation>
        </message>
        <message>
            <source>One new token per sequence attends to itself and the {T} tokens the prefill put in the KV cache, so each all-reduce carries just [{B}, 1, d_model]: {S}.</source>
            <translation>每个序列的一个新词元关注它自己以及预填充放入 KV 缓存的 {T} 个词元，所以每次 all-reduce 只携带 [{B}, 1, d_model]：{S}。</translation>
        </message>
        <message>
            <source>Meanwhile {messages} of step {s} ({b}) arrive too: their senders did not wait for this step. {pairs}{more}.</source>
            <translation>与此同时，第 {s} 步的 {messages}（{b}）也到达了：它们的发送方没有等这一步。{pairs}{more}。</translation>
        </message>
        <message>
            <source>Meanwhile {messages} of steps {s} ({b}) arrive too: their senders did not wait for this step. {pairs}{more}.</source>
            <translation>与此同时，第 {s} 步的 {messages}（{b}）也到达了：它们的发送方没有等这一步。{pairs}{more}。</translation>
        </message>
    </context>
    <context>
        <name>Export</name>
        <message>
            <source>Cannot write %1: it is a folder.</source>
            <translation>无法写入 %1：它是一个文件夹。</translation>
        </message>
        <message>
            <source>Cannot write %1: the folder %2 does not exist.</source>
            <translation>无法写入 %1：文件夹 %2 不存在。</translation>
        </message>
        <message>
            <source>Cannot write %1: no permission to write in %2.</source>
            <translation>无法写入 %1：没有在 %2 中写入的权限。</translation>
        </message>
        <message>
            <source>Cannot write %1: the file is read-only.</source>
            <translation>无法写入 %1：文件是只读的。</translation>
        </message>
        <message>
            <source>Cannot write %1: %2</source>
            <translation>无法写入 %1：%2</translation>
        </message>
        <message>
            <source>Exported from Shard Lab</source>
            <translation>由 Shard Lab 导出</translation>
        </message>
        <message>
            <source>A frame is written as .png or .svg, not %1.</source>
            <translation>单帧画面只能导出为 .png 或 .svg，不能是 %1。</translation>
        </message>
        <message>
            <source>Animations are written as .gif or .mp4, not %1.</source>
            <translation>动画只能导出为 .gif 或 .mp4，不能是 %1。</translation>
        </message>
        <message>
            <source>Export cancelled.</source>
            <translation>已取消导出。</translation>
        </message>
        <message>
            <source>MP4 export needs the imageio-ffmpeg package (pip install "shard-lab[export]").</source>
            <translation>导出 MP4 需要 imageio-ffmpeg 包（pip install "shard-lab[export]"）。</translation>
        </message>
        <message>
            <source>GIF export needs the Pillow package (pip install "shard-lab[export]").</source>
            <translation>导出 GIF 需要 Pillow 包（pip install "shard-lab[export]"）。</translation>
        </message>
    </context>
    <context>
        <name>Files</name>
        <message>
            <source>%1 belongs to the system (/proc, /sys, /dev), not a file to open.</source>
            <translation>%1 属于系统（/proc、/sys、/dev），不是可以打开的文件。</translation>
        </message>
        <message>
            <source>%1 does not read like a file (it waits for data): choose a file.</source>
            <translation>%1 读起来不像文件（它在等待数据）：请选择一个文件。</translation>
        </message>
        <message>
            <source>%1 is in a system folder (/proc, /sys, /dev): choose another folder.</source>
            <translation>%1 位于系统文件夹（/proc、/sys、/dev）中：请选择其他文件夹。</translation>
        </message>
        <message>
            <source>%1 is not a regular file (a device or pipe): choose another name.</source>
            <translation>%1 不是普通文件（而是设备或管道）：请换一个名字。</translation>
        </message>
        <message>
            <source>%1 is not a regular file (a folder, device or pipe): choose a file.</source>
            <translation>%1 不是普通文件（而是文件夹、设备或管道）：请选择一个文件。</translation>
        </message>
        <message>
            <source>Cannot read %1: %2.</source>
            <translation>无法读取 %1：%2。</translation>
        </message>
        <message>
            <source>Cannot write %1: %2.</source>
            <translation>无法写入 %1：%2。</translation>
        </message>
    </context>
    <context>
        <name>FormulaPanel</name>
        <message>
            <source>One device: nothing to send, T = 0.</source>
            <translation>只有一个设备：无需发送，T = 0。</translation>
        </message>
        <message>
            <source>latency term %1: %2 · bandwidth term %3: %4</source>
            <translation>延迟项 %1：%2 · 带宽项 %3：%4</translation>
        </message>
        <message>
            <source>simulated (trace): %1 — equals the closed form ✓</source>
            <translation>模拟结果（trace）：%1 — 与解析公式相等 ✓</translation>
        </message>
        <message>
            <source>simulated (trace): %1 — differs from the closed form</source>
            <translation>模拟结果（trace）：%1 — 与解析公式不同</translation>
        </message>
        <message>
            <source>α: latency per message · β: bandwidth per port and direction · S: bytes of the full array · n: devices</source>
            <translation>α：每条消息的延迟 · β：每个端口每个方向的带宽 · S：完整数组的字节数 · n：设备数</translation>
        </message>
        <message>
            <source>α: latency per message · β: bandwidth per port and direction · S: bytes of one GPU's buffer (n blocks of S/n) · n: devices</source>
            <translation>α：每条消息的延迟 · β：每个端口每个方向的带宽 · S：一块 GPU 缓冲区的字节数（n 个 S/n 的数据块）· n：设备数</translation>
        </message>
        <message>
            <source>No collective at this time.</source>
            <translation>此刻没有集合通信。</translation>
        </message>
        <message>
            <source>Formula</source>
            <translation>公式</translation>
        </message>
        <message>
            <source>B: base latency %1</source>
            <translation>B：基础延迟 %1</translation>
        </message>
        <message>
            <source>all-gather inside each node ({link})</source>
            <translation>每个节点内的 all-gather（{link}）</translation>
        </message>
        <message>
            <source>all-reduce across nodes, every GPU on its own NIC ({link})</source>
            <translation>跨节点的 all-reduce，每块 GPU 用自己的网卡（{link}）</translation>
        </message>
        <message>
            <source>recursive doubling inside each node: log₂{P} rounds of the whole buffer ({link})</source>
            <translation>节点内的递归倍增：log₂{P} 轮，每轮交换整个缓冲区（{link}）</translation>
        </message>
        <message>
            <source>recursive doubling across nodes: log₂{N} rounds of the whole buffer ({link})</source>
            <translation>跨节点的递归倍增：log₂{N} 轮，每轮交换整个缓冲区（{link}）</translation>
        </message>
        <message>
            <source>in-network reduction in the fabric's switches (SHARP), over each GPU's NIC ({link})</source>
            <translation>在网络交换机中归约（SHARP），经每块 GPU 的网卡（{link}）</translation>
        </message>
        <message>
            <source>every block at once: the slower of NVLink's P − 1 blocks and the NIC's n − P</source>
            <translation>所有块同时发出：取 NVLink 上 P − 1 块与网卡上 n − P 块中较慢的一方</translation>
        </message>
        <message>
            <source>base latency of each collective call (NCCL's baseLat)</source>
            <translation>每次集合通信调用的基础延迟（NCCL 的 baseLat）</translation>
        </message>
        <message>
            <source>bidirectional rings on each axis of the {shape} torus</source>
            <translation>{shape} 环面每个轴上的双向环</translation>
        </message>
        <message>
            <source>the launch floor: no call finishes before L = %1, as measured with CUDA graphs</source>
            <translation>启动下限：任何调用都不早于 L = %1 完成（CUDA graph 下的实测）</translation>
        </message>
        <message>
            <source>the launch floor: no call finishes before L = %1, as measured with eager launches</source>
            <translation>启动下限：任何调用都不早于 L = %1 完成（eager 启动下的实测）</translation>
        </message>
        <message>
            <source>reduce-scatter inside each node ({link})</source>
            <translation>每个节点内的 reduce-scatter（{link}）</translation>
        </message>
        <message>
            <source>{K} lockstep ring steps, each as slow as its slower port: NVLink or the NIC</source>
            <translation>{K} 个同步的环步，每步取决于较慢的端口：NVLink 或网卡</translation>
        </message>
        <message>
            <source>%1 on the %2</source>
            <translation>%1，在 %2 上</translation>
        </message>
        <message>
            <source>F: the op's FLOPs · P: peak FLOP/s (%1) · B: HBM bytes read and written · W: HBM bandwidth</source>
            <translation>F：该算子的浮点运算数 · P：峰值 FLOP/s（%1）· B：读写的 HBM 字节数 · W：HBM 带宽</translation>
        </message>
        <message>
            <source>compute-bound: the arithmetic sets the time</source>
            <translation>计算受限：算术运算决定耗时</translation>
        </message>
        <message>
            <source>intensity %1 FLOP/byte vs the chip's ridge point %2 FLOP/byte</source>
            <translation>算术强度 %1 FLOP/字节，芯片的拐点为 %2 FLOP/字节</translation>
        </message>
        <message>
            <source>memory-bound: HBM traffic sets the time</source>
            <translation>显存带宽受限：HBM 读写决定耗时</translation>
        </message>
        <message>
            <source>simulated (trace): %1 — differs from the roofline</source>
            <translation>模拟结果（trace）：%1 — 与 roofline 不同</translation>
        </message>
        <message>
            <source>simulated (trace): %1 — equals the roofline ✓</source>
            <translation>模拟结果（trace）：%1 — 与 roofline 相等 ✓</translation>
        </message>
        <message>
            <source>the ring across the nodes: K = {K} steps of s = S/n; a chunk crossing V hops in a row, J = ⌈V/P⌉ of them between nodes, then waits K − V steps behind the NIC; c = α + s/β of a hop</source>
            <translation>跨节点的 ring：K = {K} 步，每步 s = S/n；一块数据连续走 V 跳，其中 J = ⌈V/P⌉ 跳跨节点，之后在 NIC 后面等 K − V 步；c = 一跳的 α + s/β</translation>
        </message>
        <message>
            <source>α_f, β_f: inside a node; α_i, β_i: between nodes (each GPU's NIC); B: base latency %1</source>
            <translation>α_f, β_f：节点内；α_i, β_i：节点间（每块 GPU 自己的 NIC）；B：基础延迟 %1</translation>
        </message>
        <message>
            <source>NCCL protocol: %1 — %2.</source>
            <translation>NCCL 协议：%1 — %2。</translation>
        </message>
        <message>
            <source>No NCCL protocol: %1.</source>
            <translation>没有 NCCL 协议：%1。</translation>
        </message>
        <message>
            <source>pipelined in {C} chunks: chunk c + 1 inside the node while chunk c crosses the network</source>
            <translation>流水线分 {C} 块：第 c 块穿过网络时，第 c + 1 块在节点内进行</translation>
        </message>
        <message>
            <source>NCCL's Tree: a chain of {P} GPUs in each node, a binary tree of {N} nodes across them, up and back down, pipelined in {C} chunks of two halves</source>
            <translation>NCCL 的 Tree：每个节点内 {P} 块 GPU 成一条链，{N} 个节点之间成二叉树，先向上再向下，分 {C} 块（每块两半）流水</translation>
        </message>
    </context>
    <context>
        <name>GenericText</name>
        <message>
            <source>({k} more problems)</source>
            <translation>（另有 {k} 个问题）</translation>
        </message>
        <message>
            <source>, which adds it to its partial sum of {set}.</source>
            <translation>，接收方把它加到自己的部分和上，现在是 {set} 的和。</translation>
        </message>
        <message>
            <source>, which stores a copy of nothing the sender held.</source>
            <translation>，接收方保存一份副本，但发送方并没有这块数据。</translation>
        </message>
        <message>
            <source>, which stores a copy of {who}'s data.</source>
            <translation>，接收方保存一份副本：{who} 的数据。</translation>
        </message>
        <message>
            <source>, which stores a copy: the sum of {set}.</source>
            <translation>，接收方保存一份副本：{set} 的和。</translation>
        </message>
        <message>
            <source>Checked: every chunk ends as {op} needs it.</source>
            <translation>检查通过：每个分块最后都符合 {op} 的要求。</translation>
        </message>
        <message>
            <source>Checked: {op} is wrong.</source>
            <translation>检查未通过：{op} 结果错误。</translation>
        </message>
        <message>
            <source>GPU {d}</source>
            <translation>GPU {d}</translation>
        </message>
        <message>
            <source>GPUs {set}</source>
            <translation>GPU {set}</translation>
        </message>
        <message>
            <source>No closed form for this algorithm: its time is compared with the lower bound, the busiest port's bytes / β.</source>
            <translation>此算法没有闭式公式：用时与下界比较，即最忙端口的字节数 / β。</translation>
        </message>
        <message>
            <source>Opened run</source>
            <translation>打开的运行</translation>
        </message>
        <message>
            <source>Step {k} of {K} — {state}</source>
            <translation>第 {k} 步，共 {K} 步 — {state}</translation>
        </message>
        <message>
            <source>This step: {d} on the clock ({a} → {b}); {m} messages.</source>
            <translation>本步：时钟上 {d}（{a} → {b}）；{m} 条消息。</translation>
        </message>
        <message>
            <source>chunk {c}</source>
            <translation>第 {c} 块</translation>
        </message>
        <message>
            <source>done</source>
            <translation>已完成</translation>
        </message>
        <message>
            <source>in progress</source>
            <translation>进行中</translation>
        </message>
        <message>
            <source>next</source>
            <translation>下一步</translation>
        </message>
        <message>
            <source>simulated: {t}</source>
            <translation>模拟：{t}</translation>
        </message>
        <message>
            <source>the switch</source>
            <translation>交换机</translation>
        </message>
        <message>
            <source>the whole buffer</source>
            <translation>整个缓冲区</translation>
        </message>
        <message>
            <source>{op} “{algo}”: an algorithm the app does not know; each message as the trace records it.</source>
            <translation>{op}“{algo}”：应用不认识的算法；下面逐条列出 trace 记录的消息。</translation>
        </message>
        <message>
            <source>{src} sends {chunk}, {size}, to {dst}</source>
            <translation>{src} 把{chunk}（{size}）发给 {dst}</translation>
        </message>
        <message>
            <source>… and {k} more messages in this step.</source>
            <translation>……本步还有 {k} 条消息。</translation>
        </message>
        <message>
            <source>Not checked here: {m} messages are more than the app replays while you watch; in Python, simcore.check(trace, coll={i}) says it.</source>
            <translation>此处未检查：{m} 条消息超出了应用在播放时重放的上限；请在 Python 中运行 simcore.check(trace, coll={i})。</translation>
        </message>
        <message>
            <source>{name}: it has {total} messages, more than the {limit} the app shows: the first {k} of its {K} collectives ({kept} messages) are shown.</source>
            <translation>{name}：它有 {total} 条消息，超过应用能显示的 {limit} 条：只显示其 {K} 个集合通信中的前 {k} 个（{kept} 条消息）。</translation>
        </message>
        <message>
            <source> although its messages carry the right contributors: the data moved is not what the messages say</source>
            <translation>，尽管它的消息携带了正确的贡献者：实际移动的数据与消息所说的不符</translation>
        </message>
        <message>
            <source>GPU {d} never receives chunk {c}, which {op} needs there (it needs the sum of {set})</source>
            <translation>GPU {d} 从未收到块 {c}，而 {op} 在那里需要它（需要 {set} 之和）</translation>
        </message>
        <message>
            <source>GPU {d}'s result differs from numpy's {op}: element {j} is {got}, numpy gives {want}</source>
            <translation>GPU {d} 的结果与 numpy 的 {op} 不同：第 {j} 个元素是 {got}，numpy 给出 {want}</translation>
        </message>
        <message>
            <source>GPU {d}'s result has {got} values; {op} gives {want}</source>
            <translation>GPU {d} 的结果有 {got} 个值；{op} 给出 {want} 个</translation>
        </message>
        <message>
            <source>after step {step}, GPU {d}'s chunk {c} {have} (last sent to it by GPU {src}); {op} needs {need}</source>
            <translation>第 {step} 步之后，GPU {d} 的块 {c} {have}（最后由 GPU {src} 发来）；{op} 需要 {need}</translation>
        </message>
        <message>
            <source>collective</source>
            <translation>集合通信</translation>
        </message>
        <message>
            <source>expected {n} inputs and {n} outputs (one per device), got {a} and {b}</source>
            <translation>需要 {n} 个输入和 {n} 个输出（每个设备一个），实际得到 {a} 个和 {b} 个</translation>
        </message>
        <message>
            <source>holds only {set}'s data</source>
            <translation>只有 {set} 的数据</translation>
        </message>
        <message>
            <source>in step {step}, GPU {d} adds {set}'s data to its chunk {c} a second time</source>
            <translation>第 {step} 步中，GPU {d} 第二次把 {set} 的数据加到它的块 {c} 上</translation>
        </message>
        <message>
            <source>in step {step}, GPU {src} sends chunk {c} to GPU {dst} at {t}, before it holds that data (it lands at {lands})</source>
            <translation>第 {step} 步中，GPU {src} 在 {t} 把块 {c} 发给 GPU {dst}，而那时它还没有这份数据（数据在 {lands} 才到）</translation>
        </message>
        <message>
            <source>in step {step}, GPU {src} sends chunk {c} to GPU {dst} but does not hold it</source>
            <translation>第 {step} 步中，GPU {src} 把块 {c} 发给 GPU {dst}，但它并不持有该块</translation>
        </message>
        <message>
            <source>sums {set}</source>
            <translation>是 {set} 之和</translation>
        </message>
        <message>
            <source>the trace has no {op} to check</source>
            <translation>轨迹中没有可检查的 {op}</translation>
        </message>
        <message>
            <source>time {t}</source>
            <translation>时间 {t}</translation>
        </message>
        <message>
            <source>time {t}: equals the {algo} closed form {m}</source>
            <translation>时间 {t}：等于 {algo} 的闭式解 {m}</translation>
        </message>
        <message>
            <source>time {t}: {r}× the lower bound {b} (α + {B} bytes through the busiest port / β)</source>
            <translation>时间 {t}：是下界 {b} 的 {r} 倍（α + 最忙端口的 {B} 字节 / β）</translation>
        </message>
        <message>
            <source>time {t}: {r}× the {algo} closed form {m}</source>
            <translation>时间 {t}：是 {algo} 闭式解 {m} 的 {r} 倍</translation>
        </message>
        <message>
            <source>{set}'s data</source>
            <translation>{set} 的数据</translation>
        </message>
        <message>
            <source>{t} µs</source>
            <translation>{t} µs</translation>
        </message>
        <message>
            <source>GPU {d} never receives chunk {c} ({set}'s data), which {op} needs</source>
            <translation>GPU {d} 从未收到块 {c}（{set} 的数据），而 {op} 需要它</translation>
        </message>
        <message>
            <source>holds no GPU's data</source>
            <translation>不含任何 GPU 的数据</translation>
        </message>
        <message>
            <source>in step {step}, GPU {src} sends chunk {c} to GPU {dst}, which already holds it ({set}'s data)</source>
            <translation>第 {step} 步中，GPU {src} 把块 {c} 发给 GPU {dst}，而对方已经持有它（{set} 的数据）</translation>
        </message>
        <message>
            <source>in step {step}, GPU {src} sends chunk {c} to GPU {dst}, which already holds that data in a larger sum ({have}): the copy replaces that sum with {sent}'s data</source>
            <translation>第 {step} 步中，GPU {src} 把块 {c} 发给 GPU {dst}，而对方已经在一个更大的和（{have}）里持有这份数据：这次复制把那个和换成了 {sent} 的数据</translation>
        </message>
        <message>
            <source>no GPU</source>
            <translation>没有 GPU</translation>
        </message>
    </context>
    <context>
        <name>LatencyView</name>
        <message>
            <source>Decode step</source>
            <translation>解码步</translation>
        </message>
        <message>
            <source>FFN communication (Pope et al.)</source>
            <translation>FFN 通信（Pope 等）</translation>
        </message>
        <message>
            <source>Decode latency</source>
            <translation>解码延迟</translation>
        </message>
        <message>
            <source>Pre&amp;set</source>
            <translation>预设(&amp;S)</translation>
        </message>
        <message>
            <source>&amp;Model</source>
            <translation>模型(&amp;M)</translation>
        </message>
        <message>
            <source>&amp;Chip</source>
            <translation>芯片(&amp;C)</translation>
        </message>
        <message>
            <source>&amp;Link</source>
            <translation>链路(&amp;L)</translation>
        </message>
        <message>
            <source>&amp;All-reduce</source>
            <translation>&amp;All-reduce</translation>
        </message>
        <message>
            <source>&amp;Batch</source>
            <translation>批大小(&amp;B)</translation>
        </message>
        <message>
            <source>Conte&amp;xt</source>
            <translation>上下文(&amp;X)</translation>
        </message>
        <message>
            <source>&amp;Weights</source>
            <translation>权重(&amp;W)</translation>
        </message>
        <message>
            <source>&amp;KV cache</source>
            <translation>&amp;KV cache</translation>
        </message>
        <message>
            <source>Acti&amp;vations</source>
            <translation>激活(&amp;V)</translation>
        </message>
        <message>
            <source>&amp;Devices n</source>
            <translation>设备数 n(&amp;D)</translation>
        </message>
        <message>
            <source>&amp;Export…</source>
            <translation>导出(&amp;E)…</translation>
        </message>
        <message>
            <source>{plot} as {fmt}…</source>
            <translation>{plot} 导出为 {fmt}…</translation>
        </message>
        <message>
            <source>Decode latency plot</source>
            <translation>解码延迟图</translation>
        </message>
        <message>
            <source>FFN communication plot</source>
            <translation>FFN 通信图</translation>
        </message>
        <message>
            <source>compute</source>
            <translation>计算</translation>
        </message>
        <message>
            <source>memory</source>
            <translation>显存</translation>
        </message>
        <message>
            <source>comm</source>
            <translation>通信</translation>
        </message>
        <message>
            <source>compute-bound</source>
            <translation>计算受限</translation>
        </message>
        <message>
            <source>memory-bound</source>
            <translation>显存带宽受限</translation>
        </message>
        <message>
            <source>communication-bound</source>
            <translation>通信受限</translation>
        </message>
        <message>
            <source>t_math (compute)</source>
            <translation>t_math（计算）</translation>
        </message>
        <message>
            <source>t_mem (HBM reads)</source>
            <translation>t_mem（HBM 读取）</translation>
        </message>
        <message>
            <source>t_comm (all-reduces)</source>
            <translation>t_comm（all-reduce）</translation>
        </message>
        <message>
            <source>1D weight-stationary</source>
            <translation>1D 权重驻留</translation>
        </message>
        <message>
            <source>2D weight-stationary</source>
            <translation>2D 权重驻留</translation>
        </message>
        <message>
            <source>weight-gathered</source>
            <translation>权重收集（weight-gathered）</translation>
        </message>
        <message>
            <source>devices n (log₂ scale)</source>
            <translation>设备数 n（log₂ 坐标）</translation>
        </message>
        <message>
            <source>ms per step</source>
            <translation>每步毫秒</translation>
        </message>
        <message>
            <source>time per decode step (ms)</source>
            <translation>每个解码步的时间（ms）</translation>
        </message>
        <message>
            <source>A roofline with no overlap: each chip does 1/n of the FLOPs and reads 1/n of the weights and KV cache; two all-reduces per layer come on top. An overlapped step may beat it, never the lower bound max(t_math, t_mem, t_comm).</source>
            <translation>不重叠的 roofline：每个芯片做 1/n 的 FLOPs，读取 1/n 的权重和 KV cache；每层另加两次 all-reduce。重叠的一步可以比它快，但不会快过下界 max(t_math, t_mem, t_comm)。</translation>
        </message>
        <message>
            <source>per layer (µs)</source>
            <translation>每层（µs）</translation>
        </message>
        <message>
            <source>best n = {n}: {ms:.1f} ms per step with no overlap</source>
            <translation>最佳 n = {n}：不重叠时每步 {ms:.1f} ms</translation>
        </message>
        <message>
            <source>&gt; {hbm} HBM</source>
            <translation>&gt; {hbm} HBM</translation>
        </message>
        <message>
            <source>does not fit in {hbm} HBM</source>
            <translation>放不进 {hbm} HBM</translation>
        </message>
        <message>
            <source>measured</source>
            <translation>实测</translation>
        </message>
        <message>
            <source>published measurement</source>
            <translation>已发表的实测值</translation>
        </message>
        <message>
            <source>worked example</source>
            <translation>算例</translation>
        </message>
        <message>
            <source>published worked example (a roofline)</source>
            <translation>已发表的算例（roofline）</translation>
        </message>
        <message>
            <source>ours there</source>
            <translation>我们在该点的估计</translation>
        </message>
        <message>
            <source>our roofline at that setting</source>
            <translation>我们在该设置下的 roofline</translation>
        </message>
        <message>
            <source>Not plotted: {why} The previous curves stay.</source>
            <translation>未绘制：{why} 保留之前的曲线。</translation>
        </message>
        <message>
            <source>{link} (the chip's own)</source>
            <translation>{link}（该芯片自带）</translation>
        </message>
        <message>
            <source>published setting…</source>
            <translation>已发表的设置…</translation>
        </message>
        <message>
            <source>FFN communication per layer, Pope et al. 2022: tokens = batch = {b}, E = {E}, F = {F}, {bw:g} GB/s</source>
            <translation>每层 FFN 通信，Pope 等 2022：tokens = batch = {b}，E = {E}，F = {F}，{bw:g} GB/s</translation>
        </message>
        <message>
            <source>KV replicated: n &gt; G = {G}</source>
            <translation>KV 复制：n &gt; G = {G}</translation>
        </message>
        <message>
            <source>KV replication starts: n &gt; G = {G}</source>
            <translation>KV 开始复制：n &gt; G = {G}</translation>
        </message>
        <message>
            <source>comm from n = {n}</source>
            <translation>从 n = {n} 起通信主导</translation>
        </message>
        <message>
            <source>comm dominates from n = {n}</source>
            <translation>从 n = {n} 起通信占主导</translation>
        </message>
        <message>
            <source>node: {k} GPUs</source>
            <translation>节点：{k} 块 GPU</translation>
        </message>
        <message>
            <source>node boundary: {k} GPUs per node — beyond, the all-reduce crosses InfiniBand</source>
            <translation>节点边界：每节点 {k} 块 GPU — 超过后，all-reduce 要经过 InfiniBand</translation>
        </message>
        <message>
            <source>{who}: {ms:.0f} ms</source>
            <translation>{who}：{ms:.0f} ms</translation>
        </message>
        <message>
            <source>a measurement of a real system: our roofline should sit below it</source>
            <translation>真实系统的实测值：我们的 roofline 应当低于它</translation>
        </message>
        <message>
            <source>a worked example (someone else's roofline arithmetic): ours should agree</source>
            <translation>算例（他人的 roofline 计算）：我们的结果应当与之一致</translation>
        </message>
        <message>
            <source>{name}
{ms:.1f} ms per step at n = {n}, batch {b}, ctx {ctx}
{kind}
Source: {src}</source>
            <translation>{name}
在 n = {n}、batch {b}、ctx {ctx} 时每步 {ms:.1f} ms
{kind}
来源：{src}</translation>
        </message>
        <message>
            <source>Our roofline at the published setting: {term} = {ms:.1f} ms
(published: {pub:.1f} ms)</source>
            <translation>我们在已发表设置下的 roofline：{term} = {ms:.1f} ms
（已发表：{pub:.1f} ms）</translation>
        </message>
        <message>
            <source>{bound} up to n = {n}</source>
            <translation>直到 n = {n} 为{bound}</translation>
        </message>
        <message>
            <source>communication never dominates up to n = {n}</source>
            <translation>直到 n = {n} 通信都不占主导</translation>
        </message>
        <message>
            <source>communication dominates from n = {n}</source>
            <translation>从 n = {n} 起通信占主导</translation>
        </message>
        <message>
            <source>does not fit in HBM on up to {n} chips</source>
            <translation>在不超过 {n} 个芯片时放不进 HBM</translation>
        </message>
        <message>
            <source>fits in HBM from n = {n}</source>
            <translation>从 n = {n} 起可放进 HBM</translation>
        </message>
        <message>
            <source>Published points appear for {names}: pick one under “Preset”.</source>
            <translation>已发表的数据点仅在 {names} 下显示：请在“预设”中选择。</translation>
        </message>
        <message>
            <source>★ measured, ◆ worked example, ✕ our roofline at the published setting. Hover a marker for its source.</source>
            <translation>★ 实测，◆ 算例，✕ 我们在已发表设置下的 roofline。鼠标悬停在标记上可查看来源。</translation>
        </message>
        <message>
            <source>Export</source>
            <translation>导出</translation>
        </message>
        <message>
            <source>t_step, overlapped</source>
            <translation>t_step（重叠）</translation>
        </message>
        <message>
            <source>t_step with overlap (async TP: collective matmul)</source>
            <translation>重叠通信后的 t_step（异步 TP：collective matmul）</translation>
        </message>
        <message>
            <source>no TP split beyond n = {n}</source>
            <translation>n &gt; {n} 无法张量并行切分</translation>
        </message>
        <message>
            <source>n &gt; {n}: no tensor-parallel split ({H} query heads)</source>
            <translation>n &gt; {n}：无法张量并行切分（{H} 个查询头）</translation>
        </message>
        <message>
            <source> · not a tensor-parallel degree</source>
            <translation> · 不是可用的张量并行度</translation>
        </message>
        <message>
            <source>TP degree</source>
            <translation>张量并行度</translation>
        </message>
        <message>
            <source>n = {ns} are the tensor-parallel degrees</source>
            <translation>可用的张量并行度：n = {ns}</translation>
        </message>
        <message>
            <source>tensor-parallel degree (n splits the heads evenly)</source>
            <translation>张量并行度（n 能均分注意力头）</translation>
        </message>
        <message>
            <source>{bound} at every tensor-parallel degree</source>
            <translation>在所有张量并行度下均为{bound}</translation>
        </message>
        <message>
            <source>Mach&amp;ine</source>
            <translation>机器(&amp;I)</translation>
        </message>
        <message>
            <source>one switch (link)</source>
            <translation>单个交换机（链路）</translation>
        </message>
        <message>
            <source>&amp;Overlap (async TP)</source>
            <translation>重叠通信（异步 TP）(&amp;O)</translation>
        </message>
        <message>
            <source>Add the step with each row-parallel matmul's all-reduce overlapped (collective matmul, as async tensor parallelism does): the matmul is cut into n chunks, and the ring sends each chunk's partial sum while the next one is computed.</source>
            <translation>再画一条曲线：每个行并行矩阵乘的 all-reduce 与计算重叠（collective matmul，异步张量并行的做法）：矩阵乘被切成 n 块，环在计算下一块的同时发送上一块的部分和。</translation>
        </message>
        <message>
            <source>Why not: {why}.</source>
            <translation>不可用：{why}。</translation>
        </message>
        <message>
            <source>the collective matmul overlaps the ring reduce-scatter: choose the ring all-reduce</source>
            <translation>collective matmul 重叠的是环形 reduce-scatter：请选环形 all-reduce</translation>
        </message>
        <message>
            <source>the overlapped closed form is for chips on one switch: choose one switch as the machine</source>
            <translation>重叠的解析公式只适用于同一交换机上的芯片：机器请选“单个交换机”</translation>
        </message>
        <message>
            <source>FFN communication per layer, Pope et al. 2022: tokens = batch = {b}, E = {E}, F = {F}</source>
            <translation>每层 FFN 通信，Pope 等 2022：tokens = batch = {b}，E = {E}，F = {F}</translation>
        </message>
        <message>
            <source>{machine}: {lo:g}–{hi:g} GB/s per chip (bidirectional rings on each torus axis)</source>
            <translation>{machine}：每块芯片 {lo:g}–{hi:g} GB/s（环面每个轴上的双向环）</translation>
        </message>
        <message>
            <source>{machine}: NVLink {bw_in:g} GB/s per GPU up to n = {P}, then {bw_out:g} GB/s across nodes: {k} {nic:g} GB/s NICs, one per GPU of a node</source>
            <translation>{machine}：n ≤ {P} 时每块 GPU 走 NVLink {bw_in:g} GB/s，之后跨节点 {bw_out:g} GB/s：{k}块 {nic:g} GB/s 的 NIC，节点内每块 GPU 一块</translation>
        </message>
        <message>
            <source>all-reduce at n = {n} ({S}): {what}, as chosen</source>
            <translation>n = {n} 时的 all-reduce（{S}）：{what}，按所选</translation>
        </message>
        <message>
            <source>machine's choice for each n (NCCL's tuner on GPUs)</source>
            <translation>每个 n 由机器自选（GPU 上用 NCCL 的调优器）</translation>
        </message>
        <message>
            <source>n = {n}: a tensor-parallel degree ({h} heads each), {ms:.1f} ms per step with no overlap</source>
            <translation>n = {n}：可用的张量并行度（每个设备 {h} 个头），不重叠时每步 {ms:.1f} ms</translation>
        </message>
        <message>
            <source>t_step, no overlap = max(t_math, t_mem) + t_comm</source>
            <translation>t_step（不重叠）= max(t_math, t_mem) + t_comm</translation>
        </message>
        <message>
            <source>{model} on {chip}, batch {b}, ctx {ctx}: best n = {n} → {ms:.1f} ms per step (roofline, no overlap)</source>
            <translation>{model}，{chip}，批大小 {b}，上下文 {ctx}：最佳 n = {n} → 每步 {ms:.1f} ms（屋顶线，不重叠）</translation>
        </message>
        <message>
            <source>{model} · {chip} · batch {b} · ctx {ctx}: best n = {n}, {ms:.1f} ms (no overlap)</source>
            <translation>{model} · {chip} · 批 {b} · 上下文 {ctx}：最佳 n = {n}，{ms:.1f} ms（不重叠）</translation>
        </message>
        <message>
            <source>all-reduce at n = {n} ({S}): {what} — the machine's choice</source>
            <translation>n = {n} 时的 all-reduce（{S}）：{what} — 机器自己的选择</translation>
        </message>
        <message>
            <source>n = {n}: t_step with overlap {o} ms · no overlap {t} ms · lower bound max(t_math, t_mem, t_comm) {lb} ms — {bound}</source>
            <translation>n = {n}：t_step（重叠）{o} ms · 不重叠 {t} ms · 下界 max(t_math, t_mem, t_comm) {lb} ms — {bound}</translation>
        </message>
        <message>
            <source>n = {n}: t_step, no overlap {t} ms · lower bound max(t_math, t_mem, t_comm) {lb} ms — {bound}</source>
            <translation>n = {n}：t_step（不重叠）{t} ms · 下界 max(t_math, t_mem, t_comm) {lb} ms — {bound}</translation>
        </message>
        <message>
            <source>t_math {a} · t_mem {m} · t_comm {c} ms · FFN communication per layer: 1D {f1} · 2D {f2} · weight-gathered {fg} µs</source>
            <translation>t_math {a} · t_mem {m} · t_comm {c} ms · 每层 FFN 通信：1D {f1} · 2D {f2} · 权重收集 {fg} µs</translation>
        </message>
        <message>
            <source>{model} on {chip}, batch {b}, ctx {ctx}: best n = {n} → {o:.1f} ms per step with async TP overlap ({ms:.1f} ms without)</source>
            <translation>{model}，{chip}，批大小 {b}，上下文 {ctx}：最佳 n = {n} → 异步 TP 重叠后每步 {o:.1f} ms（不重叠 {ms:.1f} ms）</translation>
        </message>
        <message>
            <source>{model} · {chip} · batch {b} · ctx {ctx}: best n = {n}, {o:.1f} ms overlapped ({ms:.1f} ms without)</source>
            <translation>{model} · {chip} · 批 {b} · 上下文 {ctx}：最佳 n = {n}，重叠后 {o:.1f} ms（不重叠 {ms:.1f} ms）</translation>
        </message>
    </context>
    <context>
        <name>MainWindow</name>
        <message>
            <source>Shard Lab — tensor parallelism you can watch</source>
            <translation>Shard Lab — 看得见的张量并行</translation>
        </message>
        <message>
            <source>Ring</source>
            <translation>环形</translation>
        </message>
        <message>
            <source>Scenario</source>
            <translation>场景</translation>
        </message>
        <message>
            <source>What happens in this step</source>
            <translation>这一步发生了什么</translation>
        </message>
        <message>
            <source>Timeline (send ▲ / receive ▼ per GPU)</source>
            <translation>时间线（每块 GPU：发送 ▲ / 接收 ▼）</translation>
        </message>
        <message>
            <source>&amp;File</source>
            <translation>文件(&amp;F)</translation>
        </message>
        <message>
            <source>&amp;Playback</source>
            <translation>播放(&amp;P)</translation>
        </message>
        <message>
            <source>&amp;View</source>
            <translation>视图(&amp;V)</translation>
        </message>
        <message>
            <source>&amp;Help</source>
            <translation>帮助(&amp;H)</translation>
        </message>
        <message>
            <source>Start</source>
            <translation>开头</translation>
        </message>
        <message>
            <source>Jump to the start (Home)</source>
            <translation>跳到开头（Home）</translation>
        </message>
        <message>
            <source>Step back</source>
            <translation>后退一步</translation>
        </message>
        <message>
            <source>Back to the previous step boundary (←)</source>
            <translation>回到上一个步边界（←）</translation>
        </message>
        <message>
            <source>Step</source>
            <translation>前进一步</translation>
        </message>
        <message>
            <source>Forward to the next step boundary (→)</source>
            <translation>前进到下一个步边界（→）</translation>
        </message>
        <message>
            <source>End</source>
            <translation>结尾</translation>
        </message>
        <message>
            <source>Jump to the end (End)</source>
            <translation>跳到结尾（End）</translation>
        </message>
        <message>
            <source>Slower</source>
            <translation>减速</translation>
        </message>
        <message>
            <source>Halve the speed ([)</source>
            <translation>速度减半（[）</translation>
        </message>
        <message>
            <source>Faster</source>
            <translation>加速</translation>
        </message>
        <message>
            <source>Double the speed (])</source>
            <translation>速度加倍（]）</translation>
        </message>
        <message>
            <source>Loop</source>
            <translation>循环</translation>
        </message>
        <message>
            <source>Start again at the end (O)</source>
            <translation>播完从头再来（O）</translation>
        </message>
        <message>
            <source>Save screenshot…</source>
            <translation>保存截图…</translation>
        </message>
        <message>
            <source>Save the window as a PNG (Ctrl+Shift+S)</source>
            <translation>把窗口保存为 PNG（Ctrl+Shift+S）</translation>
        </message>
        <message>
            <source>Quit</source>
            <translation>退出</translation>
        </message>
        <message>
            <source>Quit Shard Lab</source>
            <translation>退出 Shard Lab</translation>
        </message>
        <message>
            <source>Calibrate the link…</source>
            <translation>校准链路…</translation>
        </message>
        <message>
            <source>Measure α and β with MPI or read nccl-tests output, and use them as a link</source>
            <translation>用 MPI 测量 α 和 β，或读取 nccl-tests 输出，并作为链路使用</translation>
        </message>
        <message>
            <source>About Shard Lab</source>
            <translation>关于 Shard Lab</translation>
        </message>
        <message>
            <source>Deck as a &amp;web page…</source>
            <translation>讲稿导出为网页(&amp;W)…</translation>
        </message>
        <message>
            <source>The open deck as an offline web page: every step, both languages</source>
            <translation>把打开的讲稿导出为离线网页：每一步，中英两种语言</translation>
        </message>
        <message>
            <source>Show tab {k}: {name}</source>
            <translation>显示标签页 {k}：{name}</translation>
        </message>
        <message>
            <source>Speed</source>
            <translation>速度</translation>
        </message>
        <message>
            <source>Scrub through simulated time</source>
            <translation>拖动浏览模拟时间</translation>
        </message>
        <message>
            <source>Not changed: {msg}</source>
            <translation>未更改：{msg}</translation>
        </message>
        <message>
            <source>t = {t} / {T}</source>
            <translation>t = {t} / {T}</translation>
        </message>
        <message>
            <source>moved {b}</source>
            <translation>已传输 {b}</translation>
        </message>
        <message>
            <source>Pause</source>
            <translation>暂停</translation>
        </message>
        <message>
            <source>Play</source>
            <translation>播放</translation>
        </message>
        <message>
            <source>Play / pause (Space)</source>
            <translation>播放 / 暂停（空格）</translation>
        </message>
        <message>
            <source>Save screenshot</source>
            <translation>保存截图</translation>
        </message>
        <message>
            <source>PNG images (*.png)</source>
            <translation>PNG 图片 (*.png)</translation>
        </message>
        <message>
            <source>Saved {path}</source>
            <translation>已保存 {path}</translation>
        </message>
        <message>
            <source>Screenshot</source>
            <translation>截图</translation>
        </message>
        <message>
            <source>Could not write {path}</source>
            <translation>无法写入 {path}</translation>
        </message>
        <message>
            <source>Now simulating on {name}: α {a:.2f} µs, β {b:.1f} GB/s</source>
            <translation>现在在 {name} 上模拟：α {a:.2f} µs，β {b:.1f} GB/s</translation>
        </message>
        <message>
            <source>Shard Lab simulates n GPUs on one switch holding real numpy shards, moves them through ring collectives with α–β timing, and runs a tensor-parallel Transformer forward.</source>
            <translation>Shard Lab 模拟挂在一个交换机上的 n 块 GPU，它们持有真实的 numpy 分片；用环形集合通信搬运分片并按 α–β 模型计时，还运行张量并行的 Transformer 前向。</translation>
        </message>
        <message>
            <source>after step {k} of {K}</source>
            <translation>第 {k} / {K} 步之后</translation>
        </message>
        <message>
            <source>no steps</source>
            <translation>没有步骤</translation>
        </message>
        <message>
            <source>step {k} of {K} in flight</source>
            <translation>第 {k} / {K} 步传输中</translation>
        </message>
        <message>
            <source>This view could not be built:
{e}</source>
            <translation>无法构建此视图：
{e}</translation>
        </message>
        <message>
            <source>Decode latency is a plot, not an animation: Play and Step work on the Ring, Weight slices and Buffers tabs.</source>
            <translation>Decode 延迟是一张图，不是动画：播放和单步在 Ring、权重切片和缓冲区标签页里使用。</translation>
        </message>
        <message>
            <source>done: {steps}</source>
            <translation>完成：{steps}</translation>
        </message>
        <message>
            <source>start ({steps})</source>
            <translation>开始（{steps}）</translation>
        </message>
        <message>
            <source>after phase {k} of {K}</source>
            <translation>第 {k} / {K} 阶段之后</translation>
        </message>
        <message>
            <source>done: 1 phase</source>
            <translation>完成：1 个阶段</translation>
        </message>
        <message>
            <source>done: {K} phases</source>
            <translation>完成：{K} 个阶段</translation>
        </message>
        <message>
            <source>phase {k} of {K} in flight</source>
            <translation>第 {k} / {K} 阶段传输中</translation>
        </message>
        <message>
            <source>start (1 phase)</source>
            <translation>开始（1 个阶段）</translation>
        </message>
        <message>
            <source>start ({K} phases)</source>
            <translation>开始（{K} 个阶段）</translation>
        </message>
    </context>
    <context>
        <name>MatmulView</name>
        <message>
            <source>Case {k}: C = A · B on {n} GPUs</source>
            <translation>情形 {k}：在 {n} 块 GPU 上计算 C = A · B</translation>
        </message>
        <message>
            <source>Every GPU holds — and computes its own rows, no communication:</source>
            <translation>每块 GPU 持有（并计算自己的行，无需通信）：</translation>
        </message>
        <message>
            <source>all-gather A</source>
            <translation>all-gather A</translation>
        </message>
        <message>
            <source>all-gather B</source>
            <translation>all-gather B</translation>
        </message>
        <message>
            <source>all-reduce the partial sums of C</source>
            <translation>对 C 的部分和做 all-reduce</translation>
        </message>
        <message>
            <source>1. Each GPU holds:</source>
            <translation>1. 每块 GPU 持有：</translation>
        </message>
        <message>
            <source>2. After {what}:</source>
            <translation>2. {what} 之后：</translation>
        </message>
        <message>
            <source>every GPU</source>
            <translation>每块 GPU</translation>
        </message>
        <message>
            <source>rows split</source>
            <translation>按行切</translation>
        </message>
        <message>
            <source>columns split</source>
            <translation>按列切</translation>
        </message>
        <message>
            <source>partial sums</source>
            <translation>部分和</translation>
        </message>
        <message>
            <source>Colour = the GPU that holds a block; diagonal stripes of every GPU's colour = every GPU holds all of it.</source>
            <translation>颜色 = 持有该块的 GPU；由所有 GPU 颜色组成的斜条纹 = 每个 GPU 都持有完整副本。</translation>
        </message>
    </context>
    <context>
        <name>MeshError</name>
        <message>
            <source>, </source>
            <translation>、</translation>
        </message>
        <message>
            <source>A mesh of {n} devices does not fit {machine}: choose axis sizes whose product is one of {fits}.</source>
            <translation>{n} 个设备的网格放不进 {machine}：请让各轴大小之积为 {fits} 之一。</translation>
        </message>
        <message>
            <source>A pending {a} cannot become a pending {b}: reduce it first (to Replicate or Shard), then start the other.</source>
            <translation>待定的 {a} 不能直接变成待定的 {b}：请先把它归约（到 Replicate 或 Shard），再开始另一种。</translation>
        </message>
        <message>
            <source>A shard cannot become a pending sum over {axis}: a shard is a piece of the array, not a term of its sum. Go to Replicate over {axis} first.</source>
            <translation>分片不能变成沿 {axis} 的待定求和：分片是数组的一块，不是求和的一项。请先沿 {axis} 变为 Replicate。</translation>
        </message>
        <message>
            <source>Axis {axis} is named twice: give each mesh axis once, e.g. X=2,Y=4.</source>
            <translation>轴 {axis} 写了两次：每条网格轴只写一次，例如 X=2,Y=4。</translation>
        </message>
        <message>
            <source>Axis {axis} shards two things at once: a mesh axis shards at most one dimension of an array (or holds its pending sum).</source>
            <translation>轴 {axis} 同时切分了两处：一条网格轴最多切分数组的一个维度（或承载它的待定求和）。</translation>
        </message>
        <message>
            <source>Dimension {dim} has length {length}, which does not split over {over}: choose axis sizes whose product divides {length}.</source>
            <translation>维度 {dim} 长 {length}，无法均分到 {over} 上：请让各轴大小之积整除 {length}。</translation>
        </message>
        <message>
            <source>Dimension {dim} has length {length}, which does not split over {over}: choose {axis} from {choices}.</source>
            <translation>维度 {dim} 长 {length}，无法均分到 {over} 上：{axis} 请从 {choices} 中选。</translation>
        </message>
        <message>
            <source>The layout {spec} has {entries} entries but the array has {ndim} dimensions: give at most {ndim}.</source>
            <translation>布局 {spec} 有 {entries} 项，但数组只有 {ndim} 维：最多写 {ndim} 项。</translation>
        </message>
        <message>
            <source>The mesh view draws at most {most} devices and this mesh has {n}: make its axes smaller.</source>
            <translation>网格视图最多画 {most} 个设备，这个网格有 {n} 个：请把轴改小。</translation>
        </message>
        <message>
            <source>The program's two axes are both {axis}: name two different axes.</source>
            <translation>程序的两条轴都是 {axis}：请给出两条不同的轴。</translation>
        </message>
        <message>
            <source>There is no mesh program “{program}”: choose one of {programs}.</source>
            <translation>没有名为“{program}”的网格程序：请从 {programs} 中选。</translation>
        </message>
        <message>
            <source>This mesh has no axis {axis}: its axes are {axes}.</source>
            <translation>这个网格没有轴 {axis}：它的轴是 {axes}。</translation>
        </message>
        <message>
            <source>This program needs {need} mesh axes but the mesh has only {axes}: add an axis, e.g. X=2,Y=4.</source>
            <translation>这个程序需要 {need} 条网格轴，但网格只有 {axes}：请再加一条轴，例如 X=2,Y=4。</translation>
        </message>
        <message>
            <source>Type the mesh as axis names and sizes, e.g. X=2,Y=4.</source>
            <translation>请按“轴名=大小”输入网格，例如 X=2,Y=4。</translation>
        </message>
        <message>
            <source>{machine} with {n} chips is a {need} torus and each mesh axis is one of its sides: type a mesh of that shape, e.g. {example}.</source>
            <translation>{n} 芯片的 {machine} 是 {need} 的环面，每条网格轴对应它的一条边：请输入这个形状的网格，例如 {example}。</translation>
        </message>
        <message>
            <source>{param} = {value} is not a multiple of scale {scale}: choose a multiple of {scale}.</source>
            <translation>{param} = {value} 不是 scale {scale} 的倍数：请取 {scale} 的倍数。</translation>
        </message>
        <message>
            <source>{param} cannot be {value}: choose one of {choices}.</source>
            <translation>{param} 不能是 {value}：请从 {choices} 中选。</translation>
        </message>
        <message>
            <source>{param} goes only without {other}: leave it out.</source>
            <translation>有 {other} 时不能给 {param}：请去掉它。</translation>
        </message>
        <message>
            <source>{param} goes together with {other}: give both or neither.</source>
            <translation>{param} 要和 {other} 一起给：两个都给，或都不给。</translation>
        </message>
        <message>
            <source>{param} must be a whole number of at least {least}, not {value}.</source>
            <translation>{param} 必须是不小于 {least} 的整数，不能是 {value}。</translation>
        </message>
        <message>
            <source>{program} has no parameter “{param}”: its parameters are {params}.</source>
            <translation>{program} 没有参数“{param}”：它的参数是 {params}。</translation>
        </message>
        <message>
            <source>“{part}” is not a name and a size: type NAME=SIZE pairs, e.g. X=2,Y=4.</source>
            <translation>“{part}”不是“名称=大小”：请输入 名称=大小，例如 X=2,Y=4。</translation>
        </message>
        <message>
            <source>The mesh {mesh} has {devices} devices, not n = {n}: n follows the mesh, so change its axes instead.</source>
            <translation>网格 {mesh} 有 {devices} 个设备，不是 n = {n}：n 由网格决定，请改网格的轴。</translation>
        </message>
    </context>
    <context>
        <name>MeshView</name>
        <message>
            <source>Mesh</source>
            <translation>网格</translation>
        </message>
        <message>
            <source>The mesh view draws a Mesh scenario: choose Scenario → Mesh (named axes), or shard-lab --scenario mesh --mesh X=2,Y=4 --program redistribute.</source>
            <translation>网格视图绘制网格场景：选择 场景 → 网格（命名轴），或运行 shard-lab --scenario mesh --mesh X=2,Y=4 --program redistribute。</translation>
        </message>
        <message>
            <source>{program} — mesh {mesh} on {machine}</source>
            <translation>{program} — 网格 {mesh}，机器 {machine}</translation>
        </message>
        <message>
            <source>No collective: every device multiplies its own blocks.</source>
            <translation>没有集合通信：每个设备各自乘自己的块。</translation>
        </message>
        <message>
            <source>node {k}</source>
            <translation>节点 {k}</translation>
        </message>
        <message>
            <source>colour = the device a block came from · hatched = a term of a pending sum · outlined = the groups of the axis in use · simulated {sim}, published {pub}, max |error| {err:.1e}</source>
            <translation>颜色 = 块来自哪个设备 · 斜线 = 待求和的一项 · 外框 = 当前所用轴的各组 · 模拟 {sim}，公式 {pub}，最大 |误差| {err:.1e}</translation>
        </message>
        <message>
            <source>{total} each</source>
            <translation>每台 {total}</translation>
        </message>
        <message>
            <source>{lo}–{hi}</source>
            <translation>{lo}–{hi}</translation>
        </message>
        <message>
            <source>memory per device:</source>
            <translation>每台设备的内存：</translation>
        </message>
    </context>
    <context>
        <name>MeshWords</name>
        <message>
            <source> · closed form {form}: {t}</source>
            <translation> · 闭式 {form}：{t}</translation>
        </message>
        <message>
            <source> · the book's {form}: {t} (ratio {r:.3f})</source>
            <translation> · 书中公式 {form}：{t}（比值 {r:.3f}）</translation>
        </message>
        <message>
            <source>Collective {i} of {N} on the mesh {mesh}</source>
            <translation>网格 {mesh} 上第 {i}/{N} 个集合通信</translation>
        </message>
        <message>
            <source>No collective at this time.</source>
            <translation>此时没有集合通信。</translation>
        </message>
        <message>
            <source>No collective: every device multiplies its own blocks.</source>
            <translation>没有集合通信：每个设备各自乘自己的块。</translation>
        </message>
        <message>
            <source>One group alone on idle links: {form} = {t}.</source>
            <translation>单独一组、链路空闲时：{form} = {t}。</translation>
        </message>
        <message>
            <source>The program: {sim} simulated, the book's {form} = {pub}; max |error| against one device {err:.1e}.</source>
            <translation>整个程序：模拟 {sim}，书中公式 {form} = {pub}；与单卡结果的最大 |误差| {err:.1e}。</translation>
        </message>
        <message>
            <source>Why: {why}.</source>
            <translation>原因：{why}。</translation>
        </message>
        <message>
            <source>one group alone: T = {form} = {t}</source>
            <translation>单独一组：T = {form} = {t}</translation>
        </message>
        <message>
            <source>simulated, all {G} groups at once: {t}</source>
            <translation>模拟（{G} 组同时）：{t}</translation>
        </message>
        <message>
            <source>the book: {form} = {t}</source>
            <translation>书中公式：{form} = {t}</translation>
        </message>
        <message>
            <source>{before} → {after}</source>
            <translation>{before} → {after}</translation>
        </message>
        <message>
            <source>{op} over {axis}</source>
            <translation>沿 {axis} 的 {op}</translation>
        </message>
        <message>
            <source>{short} — {what}, {algo}</source>
            <translation>{short} — {what}，{algo}</translation>
        </message>
        <message>
            <source>{short}: {what} · {G} groups of {g} at once · {S} a group · {t} simulated</source>
            <translation>{short}：{what} · {G} 组、每组 {g} 个同时进行 · 每组 {S} · 模拟 {t}</translation>
        </message>
        <message>
            <source>{what} ({algo}): every one of the {G} groups of {g} devices along {axis} runs it at once, on the same clock and the same links.</source>
            <translation>{what}（{algo}）：沿 {axis} 的 {G} 组（每组 {g} 个设备）同时运行，共用同一时钟和同一组链路。</translation>
        </message>
        <message>
            <source> (NVLS: up to the switch, multicast down)</source>
            <translation>（NVLS：上行到交换机中归约，再组播下行）</translation>
        </message>
        <message>
            <source> then </source>
            <translation> 然后 </translation>
        </message>
        <message>
            <source>, L = Σ_d d·w_d the blocks a link carries one way (w = ½ for the opposite; ≈ g²/8)</source>
            <translation>，L = Σ_d d·w_d 为一条链路单向承载的块数（正对面的 w = ½；≈ g²/8）</translation>
        </message>
        <message>
            <source>, L_a = Σ_d d·w_d the blocks a link carries one way (w = ½ for the opposite device; ≈ a²/8)</source>
            <translation>，L_a = Σ_d d·w_d 为一条链路单向承载的块数（正对面的设备 w = ½；≈ a²/8）</translation>
        </message>
        <message>
            <source>, m the chunks a device owns in the phase (a part that runs ahead onto an axis still in use queues there: not in the form)</source>
            <translation>，m 为该阶段一个设备拥有的块数（提前走到仍被占用的轴上的那一份会在那里排队：公式中不计）</translation>
        </message>
        <message>
            <source>, slowest hop's α and β (an upper bound: only some hops are slow)</source>
            <translation>，取最慢一跳的 α 和 β（上界：只有部分跳较慢）</translation>
        </message>
        <message>
            <source>, with {protocol}</source>
            <translation>，协议 {protocol}</translation>
        </message>
        <message>
            <source>, α, β and the call's base NCCL's for {algo} with {protocol} (nccl src/graph/tuning.cc)</source>
            <translation>，α、β 和调用的基础延迟取 NCCL 对 {algo}（协议 {protocol}）的值（nccl src/graph/tuning.cc）</translation>
        </message>
        <message>
            <source>: a line, one chunk a hop each way, the ends' chunks g−1 hops</source>
            <translation>：一条线，每跳向两边各传一个块，两端的块走 g−1 跳</translation>
        </message>
        <message>
            <source>NCCL's choice for one group of {g} on {group} is {algo} with {protocol}, which the engine runs only over a whole machine's devices, so every group runs NCCL's ring</source>
            <translation>NCCL 对 {group} 上一组 {g} 个设备的选择是 {algo}（协议 {protocol}），而模拟引擎只在整台机器的全部设备上运行它，所以每一组都运行 NCCL 的 ring</translation>
        </message>
        <message>
            <source>NCCL's choice for one group of {g} on {group}: {what} with {protocol}, every group at once, timed as NCCL's model times it at this size</source>
            <translation>NCCL 对 {group} 上一组 {g} 个设备的选择：{what}，协议 {protocol}；所有组同时运行，按 NCCL 模型在此消息大小下的时间计时</translation>
        </message>
        <message>
            <source>NCCL's ring</source>
            <translation>NCCL 的 ring</translation>
        </message>
        <message>
            <source>NVLS (each group reduced in its NVSwitch)</source>
            <translation>NVLS（每组在自己的 NVSwitch 中归约）</translation>
        </message>
        <message>
            <source>a ring of two: the pair exchanges its chunks</source>
            <translation>两个设备的环：这一对设备交换各自的块</translation>
        </message>
        <message>
            <source>a switch of {n} ports ({link})</source>
            <translation>{n} 端口交换机（{link}）</translation>
        </message>
        <message>
            <source>axis {axis} of {machine} has no wraparound link: a line, not a ring, so every chunk goes both ways along it and the ends' chunks travel {hops} hops (the book's no-wraparound gather)</source>
            <translation>{machine} 的 {axis} 轴没有回绕链路：它是一条线而不是环，所以每个块沿线向两边传，两端的块要走 {hops} 跳（书中无回绕的 gather）</translation>
        </message>
        <message>
            <source>base</source>
            <translation>基础延迟</translation>
        </message>
        <message>
            <source>every block goes straight to its device (one-shot), as NCCL's grouped sends do</source>
            <translation>每个块直接发往它的目标设备（一次发完），与 NCCL 的分组 send/recv 相同</translation>
        </message>
        <message>
            <source>no protocol</source>
            <translation>无协议</translation>
        </message>
        <message>
            <source>on {machine} only neighbours talk: each block goes the shorter way round the axis's ring, the opposite one half each way (the book's bidirectional all-to-all)</source>
            <translation>在 {machine} 上只有相邻设备之间能通信：每个块沿该轴的环走较近的一边，正对面的块两边各走一半（书中的双向 all-to-all）</translation>
        </message>
        <message>
            <source>on {machine} only neighbours talk: each block travels round the axis's ring</source>
            <translation>在 {machine} 上只有相邻设备之间能通信：每个块沿该轴的环传送</translation>
        </message>
        <message>
            <source>on {machine} only neighbours talk: the blocks go axis by axis, {axes}, each axis a bidirectional all-to-all (the shorter way round)</source>
            <translation>在 {machine} 上只有相邻设备之间能通信：块逐轴传送，先 {axes}，每条轴上是一次双向 all-to-all（走较近的一边）</translation>
        </message>
        <message>
            <source>one device: nothing moves</source>
            <translation>只有一个设备：没有数据移动</translation>
        </message>
        <message>
            <source>over {k} torus axes the book's gather uses every axis's links at once: the data in {k} parts, each going along the axes in its own turn, each both ways round</source>
            <translation>跨 {k} 条环面轴，书中的多轴 gather 同时使用每条轴的链路：数据分成 {k} 份，每份按自己的轮次依次沿各轴传送，每条轴上双向同时传</translation>
        </message>
        <message>
            <source>phases</source>
            <translation>各阶段</translation>
        </message>
        <message>
            <source>ppermute sends each pair's array straight to its partner</source>
            <translation>ppermute 把每一对中的数组直接发给对方</translation>
        </message>
        <message>
            <source>reduce-scatter + all-gather, each {form}</source>
            <translation>reduce-scatter + all-gather，各为 {form}</translation>
        </message>
        <message>
            <source>the book's bidirectional ring: half of every chunk goes each way round the torus axis</source>
            <translation>书中的双向环：每个块一半沿环面轴正向传，一半反向传</translation>
        </message>
        <message>
            <source>the lecture's ring over each group, every group at once on the ports of {machine}</source>
            <translation>每一组运行讲义中的 ring，所有组同时运行，共用 {machine} 的端口</translation>
        </message>
        <message>
            <source>the {shape} torus</source>
            <translation>{shape} 环面</translation>
        </message>
        <message>
            <source>total</source>
            <translation>合计</translation>
        </message>
        <message>
            <source>{N} nodes of one GPU each ({inter} between them)</source>
            <translation>{N} 个节点、每节点 1 个 GPU（节点间 {inter}）</translation>
        </message>
        <message>
            <source>{N} nodes of {P} GPUs ({intra} inside a node, {inter} between nodes)</source>
            <translation>{N} 个节点 × 每节点 {P} 个 GPU（节点内 {intra}，节点间 {inter}）</translation>
        </message>
        <message>
            <source>{algo}, as asked</source>
            <translation>{algo}（按所选）</translation>
        </message>
        <message>
            <source>{what} with {protocol} over each group of {g}, every group at once; NCCL's own pick for such a group: {own}</source>
            <translation>每组 {g} 个设备运行 {what}，协议 {protocol}，所有组同时运行；NCCL 自己对这样一组的选择是 {own}</translation>
        </message>
        <message>
            <source>each collective's closed form</source>
            <translation>各集合通信的解析公式之和</translation>
        </message>
        <message>
            <source>ring: {form} per all-reduce</source>
            <translation>ring：每次 all-reduce {form}</translation>
        </message>
        <message>
            <source>KV cache</source>
            <translation>KV 缓存</translation>
        </message>
        <message>
            <source>Memory per device: the most on device ({hi}): {top}; the least on device ({lo}): {low}.</source>
            <translation>每台设备的内存：最多的是设备 ({hi})：{top}；最少的是设备 ({lo})：{low}。</translation>
        </message>
        <message>
            <source>Memory per device: {parts} on every device.</source>
            <translation>每台设备的内存：{parts}，每台相同。</translation>
        </message>
        <message>
            <source>activations</source>
            <translation>激活值</translation>
        </message>
        <message>
            <source>buffers in flight</source>
            <translation>在途缓冲区</translation>
        </message>
        <message>
            <source>weights</source>
            <translation>权重</translation>
        </message>
    </context>
    <context>
        <name>PredictController</name>
        <message>
            <source>The collective is finished.</source>
            <translation>这次集合通信已经完成。</translation>
        </message>
        <message>
            <source>Step %1 of %2 — predict before it happens:</source>
            <translation>第 %1 / %2 步 — 先预测，再看：</translation>
        </message>
        <message>
            <source>GPU %1 sends its block %2. &lt;b&gt;Where does it go? Click the device that receives it&lt;/b&gt; (or type its number).</source>
            <translation>GPU %1 发出它的第 %2 块。&lt;b&gt;它去哪里？点击接收它的设备&lt;/b&gt;（或输入其编号）。</translation>
        </message>
        <message>
            <source>its whole buffer</source>
            <translation>它的整个缓冲区</translation>
        </message>
        <message>
            <source>chunk %1</source>
            <translation>第 %1 块</translation>
        </message>
        <message>
            <source>GPU %1 sends %2. &lt;b&gt;Click the device that receives it&lt;/b&gt; (or type its number; the switch, if it goes into the switch).</source>
            <translation>GPU %1 发送%2。&lt;b&gt;点击接收它的设备&lt;/b&gt;（或输入设备号；如果发往交换机，就点交换机）。</translation>
        </message>
        <message>
            <source>&lt;b&gt;Which chunk arrives at GPU %1?&lt;/b&gt; Click or type its number.</source>
            <translation>&lt;b&gt;哪一块会到达 GPU %1？&lt;/b&gt;点击或输入块号。</translation>
        </message>
        <message>
            <source>Skipped.</source>
            <translation>已跳过。</translation>
        </message>
        <message>
            <source>Right: %1.</source>
            <translation>答对了：%1。</translation>
        </message>
        <message>
            <source>Not quite: you chose %1, the answer is %2.</source>
            <translation>不对：你选的是 %1，答案是 %2。</translation>
        </message>
        <message>
            <source>the switch</source>
            <translation>交换机</translation>
        </message>
        <message>
            <source>GPU %1</source>
            <translation>GPU %1</translation>
        </message>
        <message>
            <source>%1 (%2): %3 of %4 right</source>
            <translation>%1（%2）：%4 题答对 %3 题</translation>
        </message>
        <message>
            <source>Score: no answers yet</source>
            <translation>得分：还没有作答</translation>
        </message>
        <message>
            <source>Step %1:</source>
            <translation>第 %1 步：</translation>
        </message>
    </context>
    <context>
        <name>PredictPanel</name>
        <message>
            <source>Skip (reveal)</source>
            <translation>跳过（直接揭晓）</translation>
        </message>
        <message>
            <source>Show the step without answering (not scored)</source>
            <translation>不作答，直接看这一步（不计分）</translation>
        </message>
    </context>
    <context>
        <name>Presentation</name>
        <message>
            <source>Light</source>
            <translation>浅色</translation>
        </message>
        <message>
            <source>Dark</source>
            <translation>深色</translation>
        </message>
        <message>
            <source>High contrast (projector)</source>
            <translation>高对比度（投影）</translation>
        </message>
        <message>
            <source>Other</source>
            <translation>其他</translation>
        </message>
        <message>
            <source>Keyboard shortcuts</source>
            <translation>键盘快捷键</translation>
        </message>
        <message>
            <source>Press ? or Esc to close.</source>
            <translation>按 ? 或 Esc 关闭。</translation>
        </message>
    </context>
    <context>
        <name>PresentationController</name>
        <message>
            <source>&amp;Presentation mode</source>
            <translation>演示模式(&amp;P)</translation>
        </message>
        <message>
            <source>Full screen with large text for a projector (F11; Esc leaves)</source>
            <translation>全屏、大字号，适合投影（F11；Esc 退出）</translation>
        </message>
        <message>
            <source>&amp;Larger text and lines</source>
            <translation>放大文字和线条(&amp;L)</translation>
        </message>
        <message>
            <source>&amp;Smaller text and lines</source>
            <translation>缩小文字和线条(&amp;S)</translation>
        </message>
        <message>
            <source>&amp;Normal size</source>
            <translation>正常大小(&amp;N)</translation>
        </message>
        <message>
            <source>&amp;Keyboard shortcuts</source>
            <translation>键盘快捷键(&amp;K)</translation>
        </message>
        <message>
            <source>Next &amp;theme</source>
            <translation>下一个主题(&amp;T)</translation>
        </message>
        <message>
            <source>Leave presentation mode</source>
            <translation>退出演示模式</translation>
        </message>
    </context>
    <context>
        <name>PresenterView</name>
        <message>
            <source>Shard Lab — presenter view</source>
            <translation>Shard Lab — 演讲者视图</translation>
        </message>
        <message>
            <source>Elapsed {t}</source>
            <translation>已用时 {t}</translation>
        </message>
        <message>
            <source>Next: (the end)</source>
            <translation>下一页：（结束）</translation>
        </message>
        <message>
            <source>Next: {k}. {title}</source>
            <translation>下一页：{k}. {title}</translation>
        </message>
    </context>
    <context>
        <name>QAbstractFileIconProvider</name>
        <message>
            <source>Folder</source>
            <translation>文件夹</translation>
        </message>
    </context>
    <context>
        <name>RingView</name>
        <message>
            <source>Devices around the switch. Click a device to select it.</source>
            <translation>设备围绕交换机排列。点击设备可选中它。</translation>
        </message>
        <message>
            <source>GPU {d}</source>
            <translation>GPU {d}</translation>
        </message>
        <message>
            <source>GPU colours:</source>
            <translation>GPU 颜色：</translation>
        </message>
        <message>
            <source>A slot's colour says whose data it holds; grey = not there yet. Outlined: arrived in the last step.</source>
            <translation>格子的颜色表示它存的是谁的数据；灰色 = 还没到。加框：上一步刚到达。</translation>
        </message>
        <message>
            <source>A slot's colour says whose data it holds; bands = a partial sum of those GPUs' data. Outlined: changed in the last step.</source>
            <translation>格子的颜色表示它存的是谁的数据；条纹 = 这些 GPU 数据的部分和。加框：上一步刚改变。</translation>
        </message>
        <message>
            <source>NVSwitch</source>
            <translation>NVSwitch</translation>
        </message>
        <message>
            <source>PCIe switch</source>
            <translation>PCIe 交换机</translation>
        </message>
        <message>
            <source>switch</source>
            <translation>交换机</translation>
        </message>
        <message>
            <source>t = {t} of {T}</source>
            <translation>t = {t} / {T}</translation>
        </message>
        <message>
            <source>No communication in this scenario.</source>
            <translation>这个场景没有通信。</translation>
        </message>
        <message>
            <source>No communication: every GPU multiplies its own rows of A by all of B.</source>
            <translation>无需通信：每块 GPU 用自己的 A 的行乘完整的 B。</translation>
        </message>
        <message>
            <source>Tensor-parallel decode step</source>
            <translation>张量并行 decode 一步</translation>
        </message>
        <message>
            <source>Tensor-parallel forward</source>
            <translation>张量并行前向</translation>
        </message>
        <message>
            <source>done</source>
            <translation>已完成</translation>
        </message>
        <message>
            <source>in progress</source>
            <translation>进行中</translation>
        </message>
        <message>
            <source>max |C − A·B| = {d:.1e}</source>
            <translation>max |C − A·B| = {d:.1e}</translation>
        </message>
        <message>
            <source>max |TP − single| = {d:.1e}</source>
            <translation>max |TP − 单卡| = {d:.1e}</translation>
        </message>
        <message>
            <source>next</source>
            <translation>即将开始</translation>
        </message>
        <message>
            <source>one device: nothing to send</source>
            <translation>只有一个设备：无需发送</translation>
        </message>
        <message>
            <source>{coll} · {state}</source>
            <translation>{coll} · {state}</translation>
        </message>
        <message>
            <source>{where}: {coll} · step {k} of {K} ({state})</source>
            <translation>{where}：{coll} · 第 {k} / {K} 步（{state}）</translation>
        </message>
        <message>
            <source>Step {k} of {K} ({state})</source>
            <translation>第 {k} / {K} 步（{state}）</translation>
        </message>
        <message>
            <source>One GPU's data: that GPU's colour. A sum: its chunk's colour (chunk k = GPU k's colour), filled by the share of the {n} GPUs added so far; full = the whole sum. Outlined: changed in the last step.</source>
            <translation>单个 GPU 的数据：该 GPU 的颜色。求和：所在块的颜色（块 k = GPU k 的颜色），填充比例 = 已累加的 GPU 占全部 {n} 个的比例；填满 = 完整的和。加框：上一步刚改变。</translation>
        </message>
        <message>
            <source>{k} queued</source>
            <translation>排队 {k} 条</translation>
        </message>
        <message>
            <source>Blocks with a dashed gold outline cross between nodes over the NICs ({bw}, α {a}); inside a node NVLink ({bw_in}, α {a_in}).</source>
            <translation>带金色虚线边框的块经网卡在节点之间传输（{bw}，α {a}）；节点内走 NVLink（{bw_in}，α {a_in}）。</translation>
        </message>
        <message>
            <source>Node {m} · {link}</source>
            <translation>节点 {m} · {link}</translation>
        </message>
        <message>
            <source>{N} nodes × {P}</source>
            <translation>{N} 个节点 × {P}</translation>
        </message>
        <message>
            <source>{link} fabric: one NIC per GPU, {bw} each way, α {a}</source>
            <translation>{link} 网络：每块 GPU 一块网卡，每个方向 {bw}，α {a}</translation>
        </message>
        <message>
            <source>{shape} slice, {link}s of {bw} each way, without wraparound links</source>
            <translation>{shape} 切片，{link}每个方向 {bw}，没有环绕链路</translation>
        </message>
        <message>
            <source>{shape} torus</source>
            <translation>{shape} 环面</translation>
        </message>
        <message>
            <source>{shape} torus, {link}s of {bw} each way; a dashed link leaving an edge wraps round to the opposite edge</source>
            <translation>{shape} 环面，{link}每个方向 {bw}；从一边伸出的虚线链路环绕到对边</translation>
        </message>
        <message>
            <source>inside the nodes: {link}</source>
            <translation>节点内：{link}</translation>
        </message>
        <message>
            <source>inter-node: {link}</source>
            <translation>跨节点：{link}</translation>
        </message>
        <message>
            <source>torus links: {link}</source>
            <translation>环面链路：{link}</translation>
        </message>
        <message>
            <source>{link} and the NICs</source>
            <translation>{link} 与网卡</translation>
        </message>
        <message>
            <source>base latency {B}: the call starts</source>
            <translation>基础延迟 {B}：调用正在启动</translation>
        </message>
        <message>
            <source>after step {k} of {K}</source>
            <translation>第 {k} / {K} 步之后</translation>
        </message>
        <message>
            <source>after the layers</source>
            <translation>各层之后</translation>
        </message>
        <message>
            <source>computing</source>
            <translation>计算中</translation>
        </message>
        <message>
            <source>done: {J} ops and {C} collectives per GPU</source>
            <translation>完成：每块 GPU {J} 个算子、{C} 次集合通信</translation>
        </message>
        <message>
            <source>layer {i}</source>
            <translation>第 {i} 层</translation>
        </message>
        <message>
            <source>layer {i} · MLP</source>
            <translation>第 {i} 层 · MLP</translation>
        </message>
        <message>
            <source>layer {i} · attention</source>
            <translation>第 {i} 层 · 注意力</translation>
        </message>
        <message>
            <source>logits</source>
            <translation>logits</translation>
        </message>
        <message>
            <source>op {j} of {J}: {op} ({state})</source>
            <translation>第 {j} / {J} 个算子：{op}（{state}）</translation>
        </message>
        <message>
            <source>start: {J} ops and {C} collectives per GPU</source>
            <translation>开始：每块 GPU {J} 个算子、{C} 次集合通信</translation>
        </message>
        <message>
            <source>step {k} of {K} in flight</source>
            <translation>第 {k} / {K} 步传输中</translation>
        </message>
        <message>
            <source>{op}: every GPU computes · op {j} of {J} ({state})</source>
            <translation>{op}：每块 GPU 都在计算 · 第 {j} / {J} 个算子（{state}）</translation>
        </message>
        <message>
            <source>{where}: {coll} (collective {i} of {C})</source>
            <translation>{where}：{coll}（第 {i} / {C} 次集合通信）</translation>
        </message>
        <message>
            <source>Colour by position round the ring:</source>
            <translation>颜色按环上位置：</translation>
        </message>
        <message>
            <source>GPU and chunk colour by position round the ring:</source>
            <translation>GPU 与数据块颜色按环上位置：</translation>
        </message>
        <message>
            <source>Case {k}: {name}</source>
            <translation>情形 {k}：{name}</translation>
        </message>
        <message>
            <source>{what} · {devices} · S = {S} · {link}</source>
            <translation>{what} · {devices} · S = {S} · {link}</translation>
        </message>
        <message>
            <source>{what} · {devices} · all-reduce {S}, all-gather {G} · {link}</source>
            <translation>{what} · {devices} · all-reduce {S}，all-gather {G} · {link}</translation>
        </message>
        <message>
            <source>{what} · {devices} · no communication</source>
            <translation>{what} · {devices} · 无通信</translation>
        </message>
        <message>
            <source>chip colours:</source>
            <translation>芯片颜色：</translation>
        </message>
        <message>
            <source>{op} · {algo} (your algorithm)</source>
            <translation>{op} · {algo}（你的算法）</translation>
        </message>
        <message>
            <source>your run</source>
            <translation>你的运行</translation>
        </message>
        <message>
            <source>{name}: {k} collectives, {m} ops</source>
            <translation>{name}：{k} 个集合通信，{m} 个算子</translation>
        </message>
        <message>
            <source>{what} · {devices} · {link}</source>
            <translation>{what} · {devices} · {link}</translation>
        </message>
        <message>
            <source>Phase {k} of {K}: {phase} ({state})</source>
            <translation>第 {k} / {K} 阶段：{phase}（{state}）</translation>
        </message>
        <message>
            <source>{where}: {coll} · phase {k} of {K}: {phase} ({state})</source>
            <translation>{where}：{coll} · 第 {k} / {K} 阶段：{phase}（{state}）</translation>
        </message>
        <message>
            <source>all-gather</source>
            <translation>all-gather</translation>
        </message>
        <message>
            <source>all-reduce</source>
            <translation>all-reduce</translation>
        </message>
        <message>
            <source>all-to-all</source>
            <translation>all-to-all</translation>
        </message>
        <message>
            <source>down from the switch</source>
            <translation>从交换机下发</translation>
        </message>
        <message>
            <source>one-shot all-gather</source>
            <translation>一步式 all-gather</translation>
        </message>
        <message>
            <source>one-shot all-to-all</source>
            <translation>一步式 all-to-all</translation>
        </message>
        <message>
            <source>one-shot reduce-scatter</source>
            <translation>一步式 reduce-scatter</translation>
        </message>
        <message>
            <source>reduce-scatter</source>
            <translation>reduce-scatter</translation>
        </message>
        <message>
            <source>up into the switch</source>
            <translation>上送至交换机</translation>
        </message>
        <message>
            <source>broadcast along the chain in the node</source>
            <translation>沿节点内的链广播</translation>
        </message>
        <message>
            <source>broadcast down the tree across nodes</source>
            <translation>沿跨节点的树向下广播</translation>
        </message>
        <message>
            <source>reduce along the chain in the node</source>
            <translation>沿节点内的链归约</translation>
        </message>
        <message>
            <source>reduce up the tree across nodes</source>
            <translation>沿跨节点的树向上归约</translation>
        </message>
        <message>
            <source>A slot's colour says whose data it holds; bands = a partial sum of those chips' data. Outlined: changed in the last step.</source>
            <translation>格子的颜色表示它存的是谁的数据；条纹 = 这些芯片数据的部分和。加框：上一步刚改变。</translation>
        </message>
        <message>
            <source>Blocks with a dashed gold outline cross between nodes over the NICs. Timed as NCCL runs {algo} with {protocol}: {base} start-up, then {bw} effective across nodes and {bw_in} inside a node, with no latency per step (NCCL's model counts it in the start-up). The link figures on the fabric and the nodes are the hardware's own.</source>
            <translation>带金色虚线边框的块经网卡在节点之间传输。计时按 NCCL 用 {protocol} 运行 {algo}：先是 {base} 的启动延迟，之后跨节点有效带宽 {bw}、节点内 {bw_in}，每一步不再另计延迟（NCCL 的模型把它算进启动延迟）。网络和节点上标的链路数字是硬件本身的。</translation>
        </message>
        <message>
            <source>Blocks with a dashed gold outline cross between nodes over the NICs. Timed as NCCL runs {algo} with {protocol}: {bw} and α {a} per step across nodes, {bw_in} and α {a_in} inside a node, after a {base} start-up. The link figures on the fabric and the nodes are the hardware's own.</source>
            <translation>带金色虚线边框的块经网卡在节点之间传输。计时按 NCCL 用 {protocol} 运行 {algo}：{base} 的启动延迟之后，跨节点每步 {bw}、α {a}，节点内 {bw_in}、α {a_in}。网络和节点上标的链路数字是硬件本身的。</translation>
        </message>
        <message>
            <source>One chip's data: that chip's colour. A sum: its chunk's colour (chunk k = chip k's colour), filled by the share of the {n} chips added so far; full = the whole sum. Outlined: changed in the last step.</source>
            <translation>单个芯片的数据：该芯片的颜色。求和：所在块的颜色（块 k = 芯片 k 的颜色），填充比例 = 已累加的芯片占全部 {n} 个的比例；填满 = 完整的和。加框：上一步刚改变。</translation>
        </message>
        <message>
            <source>chip and chunk colour by position round the ring:</source>
            <translation>芯片与数据块颜色按环上位置：</translation>
        </message>
        <message>
            <source>slice links: {link}</source>
            <translation>切片链路：{link}</translation>
        </message>
        <message>
            <source>{shape} slice</source>
            <translation>{shape} 切片</translation>
        </message>
        <message>
            <source>Mesh {mesh}: {program} · {devices} · {link}</source>
            <translation>网格 {mesh}：{program} · {devices} · {link}</translation>
        </message>
        <message>
            <source>Node {m}</source>
            <translation>节点 {m}</translation>
        </message>
    </context>
    <context>
        <name>ScenarioIO</name>
        <message>
            <source>"kind" must be one of %1, not %2.</source>
            <translation>"kind" 必须是 %1 之一，而不是 %2。</translation>
        </message>
        <message>
            <source>"n" must be a whole number of devices, not %1.</source>
            <translation>"n" 必须是整数个设备，而不是 %1。</translation>
        </message>
        <message>
            <source>"n" must be between 1 and %1, not %2.</source>
            <translation>"n" 必须在 1 到 %1 之间，而不是 %2。</translation>
        </message>
        <message>
            <source>"algo" must be one of %1, not %2.</source>
            <translation>"algo" 必须是 %1 之一，而不是 %2。</translation>
        </message>
        <message>
            <source>"nbytes" must be a positive number of bytes, not %1.</source>
            <translation>"nbytes" 必须是正的字节数，而不是 %1。</translation>
        </message>
        <message>
            <source>"nbytes" must be at most 1 TiB, not %1.</source>
            <translation>"nbytes" 最多 1 TiB，而不是 %1。</translation>
        </message>
        <message>
            <source>"link" must be one of %1, not %2.</source>
            <translation>"link" 必须是 %1 之一，而不是 %2。</translation>
        </message>
        <message>
            <source>"scenario" must be an object with the fields %1.</source>
            <translation>"scenario" 必须是包含字段 %1 的对象。</translation>
        </message>
        <message>
            <source>Unknown scenario field %1.</source>
            <translation>未知的场景字段 %1。</translation>
        </message>
        <message>
            <source>The scenario field %1 is missing.</source>
            <translation>缺少场景字段 %1。</translation>
        </message>
        <message>
            <source>"%1" must be text, not %2.</source>
            <translation>“%1”必须是文本，而不是 %2。</translation>
        </message>
        <message>
            <source>This is not a scenario file: it is not valid JSON (line %1, column %2).</source>
            <translation>这不是场景文件：不是合法的 JSON（第 %1 行，第 %2 列）。</translation>
        </message>
        <message>
            <source>This is not a Shard Lab scenario file (its "schema" is not "%1").</source>
            <translation>这不是 Shard Lab 场景文件（它的 "schema" 不是 "%1"）。</translation>
        </message>
        <message>
            <source>The scenario file has no valid "version".</source>
            <translation>场景文件没有合法的 "version"。</translation>
        </message>
        <message>
            <source>Scenario file version %1 is not supported: this Shard Lab reads version %2.</source>
            <translation>不支持版本 %1 的场景文件：当前 Shard Lab 读取版本 %2。</translation>
        </message>
        <message>
            <source>Unknown field %1 in the scenario file.</source>
            <translation>场景文件里有未知字段 %1。</translation>
        </message>
        <message>
            <source>The scenario file has no "scenario".</source>
            <translation>场景文件里没有 "scenario"。</translation>
        </message>
        <message>
            <source>"playback" may only hold "step".</source>
            <translation>"playback" 里只能有 "step"。</translation>
        </message>
        <message>
            <source>"playback.step" must be a whole number &gt;= 0.</source>
            <translation>"playback.step" 必须是 &gt;= 0 的整数。</translation>
        </message>
        <message>
            <source>"note" must be text.</source>
            <translation>"note" 必须是文本。</translation>
        </message>
        <message>
            <source>%1 is not a scenario file: it is %2 bytes, a scenario is under %3.</source>
            <translation>%1 不是场景文件：它有 %2 字节，而场景文件小于 %3 字节。</translation>
        </message>
        <message>
            <source>Cannot read %1: %2.</source>
            <translation>无法读取 %1：%2。</translation>
        </message>
        <message>
            <source>%1 is not a scenario file: it is not UTF-8 text.</source>
            <translation>%1 不是场景文件：它不是 UTF-8 文本。</translation>
        </message>
        <message>
            <source>"link_spec" must be an object with exactly "name", "alpha" and "bw".</source>
            <translation>"link_spec" 必须是恰好包含 "name"、"alpha" 和 "bw" 的对象。</translation>
        </message>
        <message>
            <source>"link_spec.name" must be a short text.</source>
            <translation>"link_spec.name" 必须是一段简短的文字。</translation>
        </message>
        <message>
            <source>"link" must be a short name (letters, digits, - _ .), not %1.</source>
            <translation>"link" 必须是简短的名字（字母、数字、- _ .），而不是 %1。</translation>
        </message>
        <message>
            <source>This is not a scenario file: its JSON is nested far too deeply.</source>
            <translation>这不是场景文件：它的 JSON 嵌套层数太深。</translation>
        </message>
        <message>
            <source>"topology": %1.</source>
            <translation>"topology"：%1。</translation>
        </message>
        <message>
            <source>"topology" must be one of %1 (or "" for one switch), not %2.</source>
            <translation>"topology" 必须是 %1 之一（或 "" 表示一台交换机），而不是 %2。</translation>
        </message>
        <message>
            <source>"machine_links" must be an object of links, beside a "topology" object.</source>
            <translation>"machine_links" 必须是由链路组成的对象，并与一个 "topology" 对象同时给出。</translation>
        </message>
        <message>
            <source>"%1" is a number with %2 digits: no field of a scenario is that large.</source>
            <translation>“%1” 是一个 %2 位的数：场景里没有哪个字段会这么大。</translation>
        </message>
        <message>
            <source>"%1" must be a finite number, not %2.</source>
            <translation>“%1” 必须是有限的数，不能是 %2。</translation>
        </message>
        <message>
            <source>"%1" is a number with %2 digits: no field of a trace is that large.</source>
            <translation>“%1” 是一个 %2 位的数：轨迹里没有哪个字段会这么大。</translation>
        </message>
        <message>
            <source>"%1" must be bytes per second from %2 (1 MB/s) to %3 (100 TB/s), not %4.</source>
            <translation>“%1” 必须是每秒 %2（1 MB/s）到 %3（100 TB/s）字节之间的数，不能是 %4。</translation>
        </message>
        <message>
            <source>"%1" must be seconds per message from 0 to %2, not %3.</source>
            <translation>“%1” 必须是每条消息 0 到 %2 秒之间的数，不能是 %3。</translation>
        </message>
        <message>
            <source>"%1" must be zero or more, not %2.</source>
            <translation>“%1” 必须大于或等于 0，不能是 %2。</translation>
        </message>
        <message>
            <source>"%1" must be at most %2, not %3.</source>
            <translation>“%1” 最多只能是 %2，不能是 %3。</translation>
        </message>
    </context>
    <context>
        <name>StepTimelineView</name>
        <message>
            <source>Not simulated: {why}</source>
            <translation>未模拟：{why}</translation>
        </message>
        <message>
            <source>GPU {d}, layer {layer}: {op}</source>
            <translation>GPU {d}，第 {layer} 层：{op}</translation>
        </message>
        <message>
            <source>GPU {d}: {op}</source>
            <translation>GPU {d}：{op}</translation>
        </message>
        <message>
            <source>compute-bound</source>
            <translation>计算受限</translation>
        </message>
        <message>
            <source>memory-bound</source>
            <translation>显存带宽受限</translation>
        </message>
        <message>
            <source>{time} · {flops}FLOP · {bytes}B from HBM · {bound}</source>
            <translation>{time} · {flops}FLOP · 从 HBM 读写 {bytes}B · {bound}</translation>
        </message>
        <message>
            <source>{k} chunks: the ring sends each one while the next is computed</source>
            <translation>{k} 块：环在计算下一块的同时发送这一块</translation>
        </message>
        <message>
            <source>comm</source>
            <translation>通信</translation>
        </message>
        <message>
            <source>GPU {d}</source>
            <translation>GPU {d}</translation>
        </message>
        <message>
            <source>Step timeline: n = {n}</source>
            <translation>单步时间线：n = {n}</translation>
        </message>
        <message>
            <source>&amp;Overlap</source>
            <translation>重叠(&amp;O)</translation>
        </message>
        <message>
            <source>none: communication waits for compute (roofline, no overlap)</source>
            <translation>无：通信等待计算完成（roofline，不重叠）</translation>
        </message>
        <message>
            <source>async: ring steps run under the next matmul chunk</source>
            <translation>异步：环的每一步在下一块矩阵乘下方同时进行</translation>
        </message>
        <message>
            <source>&amp;Layer</source>
            <translation>层(&amp;L)</translation>
        </message>
        <message>
            <source>Zoom to layer</source>
            <translation>放大到该层</translation>
        </message>
        <message>
            <source>Whole step</source>
            <translation>整个一步</translation>
        </message>
        <message>
            <source>layer</source>
            <translation>层</translation>
        </message>
        <message>
            <source>Decode step</source>
            <translation>解码一步</translation>
        </message>
        <message>
            <source>Prefill of {L} tokens</source>
            <translation>预填充 {L} 个 token</translation>
        </message>
        <message>
            <source>{step}: {model} on {n} × {chip} · batch {batch} · context {ctx} · overlap: {overlap}</source>
            <translation>{step}：{model}，{n} × {chip} · batch {batch} · 上下文 {ctx} · 重叠：{overlap}</translation>
        </message>
        <message>
            <source>time in the step</source>
            <translation>步内时间</translation>
        </message>
        <message>
            <source>Drag to pan, wheel to zoom (time only); hover a bar for its numbers.</source>
            <translation>拖动平移，滚轮缩放（仅时间轴）；把鼠标停在条上可看其数值。</translation>
        </message>
        <message>
            <source>Each GPU: compute above, its collectives below.</source>
            <translation>每个 GPU：上面是计算，下面是它的集合通信。</translation>
        </message>
        <message>
            <source>A bar is labelled when its label fits. Comm lane: sending above, receiving below, the collective's span tinted.</source>
            <translation>条足够宽时才显示标签。通信行：上半条发送，下半条接收，浅色底是集合通信的时段。</translation>
        </message>
        <message>
            <source>Simulating the step of {n} GPUs (overlap: {overlap})…</source>
            <translation>正在模拟 {n} 个 GPU 的一步（重叠：{overlap}）…</translation>
        </message>
        <message>
            <source>none</source>
            <translation>无</translation>
        </message>
        <message>
            <source>async</source>
            <translation>异步</translation>
        </message>
        <message>
            <source>collective</source>
            <translation>集合通信</translation>
        </message>
        <message>
            <source>sending</source>
            <translation>发送</translation>
        </message>
        <message>
            <source>receiving</source>
            <translation>接收</translation>
        </message>
        <message>
            <source>Roofline terms: t_math {m} · t_mem {b} · t_comm {c}.</source>
            <translation>Roofline 各项：t_math {m} · t_mem {b} · t_comm {c}。</translation>
        </message>
        <message>
            <source>Every op is memory-bound, so the simulated step equals the roofline's t_step.</source>
            <translation>每个算子都受显存带宽限制，所以模拟的一步等于 roofline 的 t_step。</translation>
        </message>
        <message>
            <source>Every op is compute-bound, so the simulated step equals the roofline's t_step.</source>
            <translation>每个算子都受计算限制，所以模拟的一步等于 roofline 的 t_step。</translation>
        </message>
        <message>
            <source>The simulated step equals the roofline's t_step.</source>
            <translation>模拟的一步等于 roofline 的 t_step。</translation>
        </message>
        <message>
            <source>+{t}: {k} ops are compute-bound; each op hides only its own memory traffic, so the sum of the ops is longer than max(t_math, t_mem).</source>
            <translation>+{t}：{k} 个算子受计算限制；每个算子只能把自己的显存读写藏在自己的计算之下，所以各算子之和长于 max(t_math, t_mem)。</translation>
        </message>
        <message>
            <source>{t}: work the roofline leaves out (K/V projections replicated when n exceeds the KV heads, vocabulary padding).</source>
            <translation>{t}：roofline 没有计入的工作（n 超过 KV 头数时重复的 K/V 投影、词表填充）。</translation>
        </message>
        <message>
            <source>{t}: communication hidden under compute by the overlap; {exposed} stays exposed.</source>
            <translation>{t}：重叠把这部分通信藏在计算之下；仍有 {exposed} 暴露在外。</translation>
        </message>
        <message>
            <source>{t}: communication the roofline does not count, or waiting for the slowest GPU.</source>
            <translation>{t}：roofline 没有计入的通信，或等待最慢的 GPU。</translation>
        </message>
        <message>
            <source>LM</source>
            <translation>LM</translation>
        </message>
        <message>
            <source>LM head</source>
            <translation>LM head</translation>
        </message>
        <message>
            <source>N</source>
            <translation>N</translation>
        </message>
        <message>
            <source>QKV</source>
            <translation>QKV</translation>
        </message>
        <message>
            <source>attention</source>
            <translation>注意力</translation>
        </message>
        <message>
            <source>attn</source>
            <translation>注意</translation>
        </message>
        <message>
            <source>dn</source>
            <translation>下</translation>
        </message>
        <message>
            <source>down</source>
            <translation>down 投影</translation>
        </message>
        <message>
            <source>g/u</source>
            <translation>门/上</translation>
        </message>
        <message>
            <source>gate/up</source>
            <translation>gate/up 投影</translation>
        </message>
        <message>
            <source>norm</source>
            <translation>归一化</translation>
        </message>
        <message>
            <source>other</source>
            <translation>其他</translation>
        </message>
        <message>
            <source>out proj</source>
            <translation>输出投影</translation>
        </message>
        <message>
            <source>{op} · {k} chunks</source>
            <translation>{op} · {k} 块</translation>
        </message>
        <message>
            <source>The step timeline opens for n up to {max}: it simulates every ring message.</source>
            <translation>单步时间线最多打开 n = {max}：它模拟环上的每一条消息。</translation>
        </message>
        <message>
            <source>Wo</source>
            <translation>Wo</translation>
        </message>
        <message>
            <source>GPU {d}: {title}, {where}
{time} on this GPU · S = {bytes}B</source>
            <translation>GPU {d}：{title}，{where}
在这块 GPU 上用时 {time} · S = {bytes}B</translation>
        </message>
        <message>
            <source>Simulated step: {total} · roofline, no overlap (max(t_math, t_mem) + t_comm): {roof} · lower bound (max(t_math, t_mem, t_comm)): {bound}</source>
            <translation>模拟的一步：{total} · 不重叠的 roofline（max(t_math, t_mem) + t_comm）：{roof} · 下界（max(t_math, t_mem, t_comm)）：{bound}</translation>
        </message>
    </context>
    <context>
        <name>TimelineView</name>
        <message>
            <source>Timeline</source>
            <translation>时间线</translation>
        </message>
        <message>
            <source>Each GPU: upper bar = sending, lower bar = receiving, grey over the whole row = computing an op. Click to jump there.</source>
            <translation>每块 GPU：上方的条 = 发送，下方的条 = 接收，整行灰色 = 正在计算一个算子。点击可跳到该时刻。</translation>
        </message>
        <message>
            <source>Each GPU: upper bar = sending, lower bar = receiving. Click to jump there.</source>
            <translation>每块 GPU：上方条 = 发送，下方条 = 接收。点击可跳到该时刻。</translation>
        </message>
        <message>
            <source>simulated time ({unit})</source>
            <translation>模拟时间（{unit}）</translation>
        </message>
        <message>
            <source>compute (each op, at least {px} px wide)</source>
            <translation>计算（每个算子，至少画 {px} 像素宽）</translation>
        </message>
        <message>
            <source>GPU {d}</source>
            <translation>GPU {d}</translation>
        </message>
        <message>
            <source>switch</source>
            <translation>交换机</translation>
        </message>
        <message>
            <source>n = 1: one GPU holds everything, nothing is sent.</source>
            <translation>n = 1：一块 GPU 持有全部数据，没有任何发送。</translation>
        </message>
        <message>
            <source>No communication in this scenario: nothing is sent.</source>
            <translation>此场景没有通信：没有任何发送。</translation>
        </message>
        <message>
            <source>GPUs {a}–{b}</source>
            <translation>GPU {a}–{b}</translation>
        </message>
        <message>
            <source>Each row: a group of GPUs. Upper band = how many of them are sending, lower (paler) band = how many are receiving; full height = all. Click to jump there.</source>
            <translation>每行：一组 GPU。上方色带 = 其中正在发送的数量，下方（较浅）色带 = 正在接收的数量；满高 = 全部。点击可跳到该时刻。</translation>
        </message>
        <message>
            <source>dashed gold outline: crosses between nodes (NIC)</source>
            <translation>金色虚线框：跨节点（经 NIC）</translation>
        </message>
        <message>
            <source>intra-node RS</source>
            <translation>节点内 RS</translation>
        </message>
        <message>
            <source>inter-node AR</source>
            <translation>节点间 AR</translation>
        </message>
        <message>
            <source>intra-node AG</source>
            <translation>节点内 AG</translation>
        </message>
        <message>
            <source>reduce-scatter</source>
            <translation>reduce-scatter</translation>
        </message>
        <message>
            <source>all-gather</source>
            <translation>all-gather</translation>
        </message>
        <message>
            <source>chip {d}</source>
            <translation>芯片 {d}</translation>
        </message>
        <message>
            <source>chips {a}–{b}</source>
            <translation>芯片 {a}–{b}</translation>
        </message>
        <message>
            <source>time ({unit})</source>
            <translation>时间（{unit}）</translation>
        </message>
        <message>
            <source>start-up latency {t}</source>
            <translation>启动延迟 {t}</translation>
        </message>
        <message>
            <source>n = 1: one chip holds everything, nothing is sent.</source>
            <translation>n = 1：一块芯片持有全部数据，没有任何发送。</translation>
        </message>
        <message>
            <source>Each row: a group of chips. Upper band = how many of them are sending, lower (paler) band = how many are receiving; full height = all. Click to jump there.</source>
            <translation>每行：一组芯片。上方色带 = 其中正在发送的数量，下方（较浅）色带 = 正在接收的数量；满高 = 全部。点击可跳到该时刻。</translation>
        </message>
        <message>
            <source>Each chip: upper bar = sending, lower bar = receiving, grey over the whole row = computing an op. Click to jump there.</source>
            <translation>每块芯片：上方的条 = 发送，下方的条 = 接收，整行灰色 = 正在计算一个算子。点击可跳到该时刻。</translation>
        </message>
        <message>
            <source>Each chip: upper bar = sending, lower bar = receiving. Click to jump there.</source>
            <translation>每块芯片：上方条 = 发送，下方条 = 接收。点击可跳到该时刻。</translation>
        </message>
    </context>
    <context>
        <name>WebExport</name>
        <message>
            <source>%1 is not empty. Write the page into it anyway? Files of the page's names (index.html, data.js, page.js, page.css, frames/) are replaced; nothing else is touched.</source>
            <translation>%1 不是空文件夹。仍要把网页写进去吗？同名的网页文件（index.html、data.js、page.js、page.css、frames/）会被替换，其他文件不动。</translation>
        </message>
        <message>
            <source>%1 is not empty: choose an empty folder, or write into it anyway (--force on the command line).</source>
            <translation>%1 不是空文件夹：请选一个空文件夹，或者仍然写入（命令行加 --force）。</translation>
        </message>
        <message>
            <source>Cannot write the page into %1: %2.</source>
            <translation>无法把网页写入 %1：%2。</translation>
        </message>
        <message>
            <source>Cannot write the page into %1: it is a file, not a folder.</source>
            <translation>无法把网页写入 %1：它是一个文件，不是文件夹。</translation>
        </message>
        <message>
            <source>Export the deck as a web page: choose a folder</source>
            <translation>把讲稿导出为网页：选择文件夹</translation>
        </message>
        <message>
            <source>Export web page</source>
            <translation>导出网页</translation>
        </message>
        <message>
            <source>Exporting the web page: scene %1 of %2…</source>
            <translation>正在导出网页：第 %1 / %2 个场景…</translation>
        </message>
        <message>
            <source>No scene of this deck can open: %1</source>
            <translation>这份讲稿没有一个场景能打开：%1</translation>
        </message>
        <message>
            <source>Open a deck first (File › Open deck…): the web page has one part per scene.</source>
            <translation>请先打开一份讲稿（文件 › 打开讲稿…）：网页每个场景一部分。</translation>
        </message>
        <message>
            <source>Saved %1 (%2 scenes, %3 MB).</source>
            <translation>已保存 %1（%2 个场景，%3 MB）。</translation>
        </message>
        <message>
            <source>The web page's files (resources/web) are missing from this installation.</source>
            <translation>这次安装缺少网页所需的文件（resources/web）。</translation>
        </message>
        <message>
            <source>Cancel</source>
            <translation>取消</translation>
        </message>
        <message>
            <source>Exporting the web page…</source>
            <translation>正在导出网页…</translation>
        </message>
        <message>
            <source>The web page was not written: the export was cancelled.</source>
            <translation>网页没有写出：导出已取消。</translation>
        </message>
    </context>
    <context>
        <name>WeightsView</name>
        <message>
            <source>Weight slices</source>
            <translation>权重切片</translation>
        </message>
        <message>
            <source>&amp;Layer</source>
            <translation>层(&amp;L)</translation>
        </message>
        <message>
            <source>&amp;Matrix</source>
            <translation>矩阵(&amp;M)</translation>
        </message>
        <message>
            <source>Weight slices belong to the TP-forward scenario: a small Transformer whose matrices are split over the GPUs.
This scenario moves no weights.</source>
            <translation>权重切片属于张量并行前向场景：一个小型 Transformer，其矩阵被切分到各个 GPU 上。
此场景不涉及权重。</translation>
        </message>
        <message>
            <source>Switch to the TP forward</source>
            <translation>切换到张量并行前向</translation>
        </message>
        <message>
            <source>layer {l}</source>
            <translation>第 {l} 层</translation>
        </message>
        <message>
            <source>whole model</source>
            <translation>整个模型</translation>
        </message>
        <message>
            <source>{c} columns: {cn}</source>
            <translation>{c} 列：{cn}</translation>
        </message>
        <message>
            <source>Full {name}, {where}: {r} × {c} = {b}</source>
            <translation>完整的 {name}，{where}：{r} × {c} = {b}</translation>
        </message>
        <message>
            <source>{r} rows: {rn} · {c} columns: {cn}</source>
            <translation>{r} 行：{rn} · {c} 列：{cn}</translation>
        </message>
        <message>
            <source>{n} GPUs</source>
            <translation>{n} 个 GPU</translation>
        </message>
        <message>
            <source>1 GPU</source>
            <translation>1 个 GPU</translation>
        </message>
        <message>
            <source>{gpus} · TINY model: d_model {D}, {H} query heads, {G} KV groups, d_head {dh}, d_ff {F}, vocab {V}</source>
            <translation>{gpus} · TINY 模型：d_model {D}，{H} 个 query 头，{G} 个 KV 组，d_head {dh}，d_ff {F}，词表 {V}</translation>
        </message>
        <message>
            <source>the decode step's logits (one new token, with the KV cache)</source>
            <translation>解码步的 logits（一个新 token，使用 KV cache）</translation>
        </message>
        <message>
            <source>the logits of every token</source>
            <translation>每个 token 的 logits</translation>
        </message>
        <message>
            <source>max |TP logits − single-device logits| over {what}.
{model}</source>
            <translation>在{what}上的 max |TP logits − 单设备 logits|。
{model}</translation>
        </message>
        <message>
            <source>replicated on all {n} GPUs</source>
            <translation>在全部 {n} 个 GPU 上复制</translation>
        </message>
        <message>
            <source>GPU 0 holds all of it</source>
            <translation>GPU 0 持有全部</translation>
        </message>
        <message>
            <source>One colour means one number in every heatmap (blue &lt; 0 &lt; red, levels ±{v:.2f}).</source>
            <translation>在所有热力图中同一颜色表示同一数值（蓝 &lt; 0 &lt; 红，范围 ±{v:.2f}）。</translation>
        </message>
        <message>
            <source>✓ Decode step: TP logits = single-device logits, max |Δ| = {d:.1e}</source>
            <translation>✓ 解码步：TP logits = 单设备 logits，max |Δ| = {d:.1e}</translation>
        </message>
        <message>
            <source>✓ TP logits = single-device logits: max |Δ| = {d:.1e}</source>
            <translation>✓ TP logits = 单设备 logits：max |Δ| = {d:.1e}</translation>
        </message>
        <message>
            <source>✗ Decode step: TP logits ≠ single-device logits, max |Δ| = {d:.1e}</source>
            <translation>✗ 解码步：TP logits ≠ 单设备 logits，max |Δ| = {d:.1e}</translation>
        </message>
        <message>
            <source>✗ TP logits ≠ single-device logits: max |Δ| = {d:.1e}</source>
            <translation>✗ TP logits ≠ 单设备 logits：max |Δ| = {d:.1e}</translation>
        </message>
        <message>
            <source>Each GPU holds a full copy: {r} × {c} = {b}</source>
            <translation>每个 GPU 持有完整副本：{r} × {c} = {b}</translation>
        </message>
        <message>
            <source>GPU 0 holds all of it: {r} × {c} = {b}</source>
            <translation>GPU 0 持有全部：{r} × {c} = {b}</translation>
        </message>
        <message>
            <source>Each GPU holds {r} × {c} = {b}</source>
            <translation>每个 GPU 持有 {r} × {c} = {b}</translation>
        </message>
        <message>
            <source>What each GPU holds</source>
            <translation>每个 GPU 持有的部分</translation>
        </message>
        <message>
            <source>its own shard, same colour scale</source>
            <translation>它自己的分片，同一色标</translation>
        </message>
        <message>
            <source>each KV group on {k} GPUs, same colour scale</source>
            <translation>每个 KV 组在 {k} 个 GPU 上，同一色标</translation>
        </message>
        <message>
            <source>same colour scale</source>
            <translation>同一色标</translation>
        </message>
        <message>
            <source>{H} query heads × d_head {dh}</source>
            <translation>{H} 个 query 头 × d_head {dh}</translation>
        </message>
        <message>
            <source>{G} KV groups × d_head {dh}</source>
            <translation>{G} 个 KV 组 × d_head {dh}</translation>
        </message>
        <message>
            <source>d_ff hidden units</source>
            <translation>d_ff 个隐藏单元</translation>
        </message>
        <message>
            <source>vocabulary</source>
            <translation>词表</translation>
        </message>
        <message>
            <source>vocabulary (token id)</source>
            <translation>词表（token id）</translation>
        </message>
        <message>
            <source>replicated</source>
            <translation>已复制</translation>
        </message>
        <message>
            <source>KV group {g}
replicated</source>
            <translation>KV 组 {g}
已复制</translation>
        </message>
        <message>
            <source>KV group {g}</source>
            <translation>KV 组 {g}</translation>
        </message>
        <message>
            <source>KV groups
{g}</source>
            <translation>KV 组
{g}</translation>
        </message>
        <message>
            <source>head {h}</source>
            <translation>头 {h}</translation>
        </message>
        <message>
            <source>heads {a}–{b}</source>
            <translation>头 {a}–{b}</translation>
        </message>
        <message>
            <source>tokens
{a}–{b}</source>
            <translation>token
{a}–{b}</translation>
        </message>
        <message>
            <source>units
{a}–{b}</source>
            <translation>单元
{a}–{b}</translation>
        </message>
        <message>
            <source>GPU {d}</source>
            <translation>GPU {d}</translation>
        </message>
        <message>
            <source>{name} is used whole: the one GPU holds all {k} values ({b}).</source>
            <translation>{name} 整体使用：唯一的 GPU 持有全部 {k} 个数值（{b}）。</translation>
        </message>
        <message>
            <source>{name} is replicated: each of the {n} GPUs holds all {k} values ({b}) — it is small and every GPU needs all of it.</source>
            <translation>{name} 被复制：{n} 个 GPU 各自持有全部 {k} 个数值（{b}）——它很小，而且每个 GPU 都需要全部。</translation>
        </message>
        <message>
            <source> Its values are all close to 1, hence one colour.</source>
            <translation> 它的数值都接近 1，所以只有一种颜色。</translation>
        </message>
        <message>
            <source>With one GPU nothing is split: GPU 0 holds all of {name}, {r} rows × {c} columns = {b}.</source>
            <translation>只有一个 GPU 时不做切分：GPU 0 持有完整的 {name}，{r} 行 × {c} 列 = {b}。</translation>
        </message>
        <message>
            <source>Wq is split by columns: each GPU holds {h} of the {H} query heads, {c} columns × {r} rows = {b}.</source>
            <translation>Wq 按列切分：每个 GPU 持有 {H} 个 query 头中的 {h} 个，{c} 列 × {r} 行 = {b}。</translation>
        </message>
        <message>
            <source>{name} has only {G} KV groups for {n} GPUs, so each group's {c} columns are replicated on {k} GPUs ({c} columns × {r} rows = {b} on each); nested outlines show who shares a group.</source>
            <translation>{name} 只有 {G} 个 KV 组却有 {n} 个 GPU，所以每组的 {c} 列被复制到 {k} 个 GPU 上（每个 GPU 上 {c} 列 × {r} 行 = {b}）；嵌套的边框表示哪些 GPU 共享同一组。</translation>
        </message>
        <message>
            <source>{name} is split by columns, one KV group per {d_head} columns: each GPU holds {g} of the {G} groups ({c} columns × {r} rows = {b}).</source>
            <translation>{name} 按列切分，每 {d_head} 列为一个 KV 组：每个 GPU 持有 {G} 个组中的 {g} 个（{c} 列 × {r} 行 = {b}）。</translation>
        </message>
        <message>
            <source>Wo is split by rows: each GPU holds the rows of its own {h} heads ({r} rows × {c} columns = {b}); the all-reduce after attention adds the {n} partial results.</source>
            <translation>Wo 按行切分：每个 GPU 持有它自己 {h} 个头对应的行（{r} 行 × {c} 列 = {b}）；注意力之后的 all-reduce 把 {n} 个部分结果相加。</translation>
        </message>
        <message>
            <source>W_down is split by rows: each GPU holds the rows of its own {r} hidden units ({r} rows × {c} columns = {b}); the all-reduce after the MLP adds the {n} partial results.</source>
            <translation>W_down 按行切分：每个 GPU 持有它自己 {r} 个隐藏单元对应的行（{r} 行 × {c} 列 = {b}）；MLP 之后的 all-reduce 把 {n} 个部分结果相加。</translation>
        </message>
        <message>
            <source>lm_head is split by columns: each GPU holds {c} of the {V} vocabulary columns ({c} columns × {r} rows = {b}); the logits are all-gathered at the end.</source>
            <translation>lm_head 按列切分：每个 GPU 持有词表 {V} 列中的 {c} 列（{c} 列 × {r} 行 = {b}）；最后对 logits 做 all-gather。</translation>
        </message>
        <message>
            <source>{name} is split by columns: each GPU holds {c} of the {F} hidden units ({c} columns × {r} rows = {b}).</source>
            <translation>{name} 按列切分：每个 GPU 持有 {F} 个隐藏单元中的 {c} 个（{c} 列 × {r} 行 = {b}）。</translation>
        </message>
    </context>
    <context>
        <name>Words</name>
        <message>
            <source>1 GPU</source>
            <translation>1 块 GPU</translation>
        </message>
        <message>
            <source>1 chip</source>
            <translation>1 颗芯片</translation>
        </message>
        <message>
            <source>1 message</source>
            <translation>1 条消息</translation>
        </message>
        <message>
            <source>1 step</source>
            <translation>1 步</translation>
        </message>
        <message>
            <source>Bidirectional ring {op}</source>
            <translation>双向 ring {op}</translation>
        </message>
        <message>
            <source>Hierarchical {op}</source>
            <translation>分层 {op}</translation>
        </message>
        <message>
            <source>Ring {op} across nodes</source>
            <translation>跨节点 ring {op}</translation>
        </message>
        <message>
            <source>Torus {op}</source>
            <translation>Torus {op}</translation>
        </message>
        <message>
            <source>chip {d}</source>
            <translation>芯片 {d}</translation>
        </message>
        <message>
            <source>eight</source>
            <translation>八</translation>
        </message>
        <message>
            <source>five</source>
            <translation>五</translation>
        </message>
        <message>
            <source>four</source>
            <translation>四</translation>
        </message>
        <message>
            <source>nine</source>
            <translation>九</translation>
        </message>
        <message>
            <source>one</source>
            <translation>一</translation>
        </message>
        <message>
            <source>seven</source>
            <translation>七</translation>
        </message>
        <message>
            <source>six</source>
            <translation>六</translation>
        </message>
        <message>
            <source>ten</source>
            <translation>十</translation>
        </message>
        <message>
            <source>three</source>
            <translation>三</translation>
        </message>
        <message>
            <source>two</source>
            <translation>两</translation>
        </message>
        <message>
            <source>zero</source>
            <translation>零</translation>
        </message>
        <message>
            <source>{k} GPUs</source>
            <translation>{k} 块 GPU</translation>
        </message>
        <message>
            <source>{k} chips</source>
            <translation>{k} 颗芯片</translation>
        </message>
        <message>
            <source>{k} messages</source>
            <translation>{k} 条消息</translation>
        </message>
        <message>
            <source>{k} steps</source>
            <translation>{k} 步</translation>
        </message>
        <message>
            <source> (next: {algo} {protocol}, {time})</source>
            <translation>（其次：{algo} {protocol}，{time}）</translation>
        </message>
        <message>
            <source>, pipelined in 1 chunk at this size</source>
            <translation>，此大小下按 1 块流水</translation>
        </message>
        <message>
            <source>, pipelined in {C} chunks at this size</source>
            <translation>，此大小下分 {C} 块流水</translation>
        </message>
        <message>
            <source>NCCL runs {algo} with {protocol} at this size: {latency} latency + S/{bw} is the least of its protocols</source>
            <translation>NCCL 在此大小下用 {protocol} 运行 {algo}：延迟 {latency} + S/{bw}，是它各协议中最快的</translation>
        </message>
        <message>
            <source>timed by the lecture's α–β form (no NCCL protocol)</source>
            <translation>按讲义的 α–β 公式计时（没有 NCCL 协议）</translation>
        </message>
        <message>
            <source>{algo} is not one of NCCL's algorithms: timed by the lecture's α–β form</source>
            <translation>{algo} 不是 NCCL 的算法之一：按讲义的 α–β 公式计时</translation>
        </message>
        <message>
            <source>{algo} {protocol} is NCCL's fastest at {size}: {latency} latency + S/{bw}</source>
            <translation>{algo} {protocol} 是 NCCL 在 {size} 时最快的：延迟 {latency} + S/{bw}</translation>
        </message>
        <message>
            <source>{algo} (NCCL's NVLS Tree)</source>
            <translation>{algo}（即 NCCL 的 NVLS Tree）</translation>
        </message>
        <message>
            <source>; at least {floor}, as measured with CUDA graphs</source>
            <translation>；至少 {floor}（CUDA graph 下的实测）</translation>
        </message>
        <message>
            <source>; at least {floor}, as measured with eager launches</source>
            <translation>；至少 {floor}（eager 启动下的实测）</translation>
        </message>
        <message>
            <source>Tree {op}</source>
            <translation>Tree {op}（树形）</translation>
        </message>
        <message>
            <source> (NCCL's model: no launch or sync)</source>
            <translation>（NCCL 的模型：不含启动与同步）</translation>
        </message>
        <message>
            <source>{algo} is not one of NCCL's algorithms: timed as the custom all-reduce kernels run, {latency} per phase + S/{bw} ({source})</source>
            <translation>{algo} 不是 NCCL 的算法之一：按自定义 all-reduce 内核的实测计时，每阶段 {latency} + S/{bw}（{source}）</translation>
        </message>
    </context>
    <context>
        <name>_WORDS</name>
        <message>
            <source>in progress</source>
            <translation>进行中</translation>
        </message>
    </context>
</TS>
