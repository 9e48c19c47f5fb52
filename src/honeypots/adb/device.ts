/**
 * The phone the honeypot pretends to be: an Android 10 handset on a 4.14 arm64 kernel (the
 * default is a Pixel 4a, which shipped with this release), with the system properties, kernel
 * strings and packages that bots read first to pick a payload. Android 10, because its adbd's
 * features are all ones this emulation speaks (see FEATURES). Product name, model, device and
 * manufacturer come from the config; the rest stays consistent with them.
 */

export interface Product {
  name: string;
  model: string;
  device: string;
  manufacturer: string;
}

export const DEFAULT_PRODUCT: Product = { name: "sunfish", model: "Pixel 4a", device: "sunfish", manufacturer: "Google" };

/**
 * Features adbd announces in its CNXN banner: Android 10's, every one of which is spoken here.
 * shell_v2 frames shell streams, stat_v2/ls_v2 are STA2 and LIS2, cmd and abb_exec make
 * `adb install` stream the APK (captured). Android 11's additions are left out with the release:
 * sendrecv_v2 would have clients push with SND2 and zstd or lz4 compression.
 */
export const FEATURES = ["shell_v2", "cmd", "stat_v2", "ls_v2", "fixed_push_mkdir", "apex", "abb", "fixed_push_symlink_timestamp", "abb_exec", "remount_shell"] as const;

export const KERNEL = {
  sysname: "Linux",
  nodename: "localhost",
  release: "4.14.150-g62a62a5a93f7-ab6570191",
  version: "#1 SMP PREEMPT Tue Jun 9 02:22:58 UTC 2020",
  machine: "aarch64",
};

const BUILD_ID = "QD4A.200805.003";
const INCREMENTAL = "6662516";
const BUILD_DATE = "Tue Jun 9 02:18:31 UTC 2020";
const BUILD_UTC = "1591669111";

/** getprop's table: a few dozen of the properties a real handset has, sorted as getprop prints them. */
export function deviceProps(p: Product): Map<string, string> {
  const brand = p.manufacturer.toLowerCase().replace(/[^a-z0-9]+/g, "");
  const fingerprint = `${brand}/${p.name}/${p.device}:10/${BUILD_ID}/${INCREMENTAL}:user/release-keys`;
  const props: Record<string, string> = {
    "dalvik.vm.heapsize": "512m",
    "dalvik.vm.isa.arm64.variant": "cortex-a76",
    "gsm.operator.alpha": "",
    "gsm.sim.state": "ABSENT,ABSENT",
    "net.bt.name": "Android",
    "persist.sys.timezone": "America/Los_Angeles",
    "persist.sys.usb.config": "adb",
    "ro.adb.secure": "1",
    "ro.board.platform": "atoll",
    "ro.boot.hardware": p.device,
    "ro.boot.serialno": "0B291JEC215037",
    "ro.boot.verifiedbootstate": "green",
    "ro.bootloader": "s5-0.2-6451458",
    "ro.build.characteristics": "nosdcard",
    "ro.build.date": BUILD_DATE,
    "ro.build.date.utc": BUILD_UTC,
    "ro.build.description": `${p.name}-user 10 ${BUILD_ID} ${INCREMENTAL} release-keys`,
    "ro.build.display.id": BUILD_ID,
    "ro.build.fingerprint": fingerprint,
    "ro.build.flavor": `${p.name}-user`,
    "ro.build.host": "abfarm-01064",
    "ro.build.id": BUILD_ID,
    "ro.build.product": p.device,
    "ro.build.tags": "release-keys",
    "ro.build.type": "user",
    "ro.build.user": "android-build",
    "ro.build.version.codename": "REL",
    "ro.build.version.incremental": INCREMENTAL,
    "ro.build.version.release": "10",
    "ro.build.version.sdk": "29",
    "ro.build.version.security_patch": "2020-08-05",
    "ro.crypto.state": "encrypted",
    "ro.debuggable": "0",
    "ro.hardware": p.device,
    "ro.kernel.version": "4.14",
    "ro.product.board": p.device,
    "ro.product.brand": brand,
    "ro.product.cpu.abi": "arm64-v8a",
    "ro.product.cpu.abilist": "arm64-v8a,armeabi-v7a,armeabi",
    "ro.product.cpu.abilist32": "armeabi-v7a,armeabi",
    "ro.product.cpu.abilist64": "arm64-v8a",
    "ro.product.device": p.device,
    "ro.product.first_api_level": "29",
    "ro.product.locale": "en-US",
    "ro.product.manufacturer": p.manufacturer,
    "ro.product.model": p.model,
    "ro.product.name": p.name,
    "ro.revision": "MP1.0",
    "ro.secure": "1",
    "ro.serialno": "0B291JEC215037",
    "ro.sf.lcd_density": "440",
    "ro.treble.enabled": "true",
    "ro.vendor.build.fingerprint": fingerprint,
    "ro.zygote": "zygote64_32",
    "service.adb.tcp.port": "5555",
    "sys.boot_completed": "1",
    "sys.usb.state": "adb",
    "wifi.interface": "wlan0",
  };
  return new Map(Object.entries(props).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** `pm list packages`: what a Pixel ships, and a couple of user apps. */
export const PACKAGES = [
  "com.android.bluetooth",
  "com.android.calllogbackup",
  "com.android.chrome",
  "com.android.vending",
  "com.android.settings",
  "com.android.shell",
  "com.android.systemui",
  "com.android.phone",
  "com.android.providers.contacts",
  "com.android.providers.media",
  "com.android.providers.downloads",
  "com.android.launcher3",
  "com.android.packageinstaller",
  "com.android.webview",
  "com.google.android.gms",
  "com.google.android.gsf",
  "com.google.android.apps.maps",
  "com.google.android.apps.photos",
  "com.google.android.apps.messaging",
  "com.google.android.dialer",
  "com.google.android.youtube",
  "com.google.android.gm",
  "com.google.android.inputmethod.latin",
  "com.google.android.apps.nexuslauncher",
  "com.whatsapp",
  "com.spotify.music",
];

export const CPUINFO = `${Array.from({ length: 8 }, (_, i) => {
  const big = i >= 6;
  return `processor\t: ${i}\nBogoMIPS\t: 38.40\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp\nCPU implementer\t: 0x51\nCPU architecture: 8\nCPU variant\t: ${big ? "0x1" : "0x7"}\nCPU part\t: ${big ? "0x804" : "0x805"}\nCPU revision\t: ${big ? "14" : "14"}\n`;
}).join("\n")}\nHardware\t: Qualcomm Technologies, Inc SM7150\n`;

export const MEMINFO = `MemTotal:        5662320 kB
MemFree:          141212 kB
MemAvailable:    2213880 kB
Buffers:            4084 kB
Cached:          2152904 kB
SwapCached:        28588 kB
Active:          1838596 kB
Inactive:        1996856 kB
SwapTotal:       2621436 kB
SwapFree:        1640700 kB
`;

export function procVersion(): string {
  return `Linux version ${KERNEL.release} (android-build@abfarm-01064) (Android (5484270 based on r353983c) clang version 9.0.3) ${KERNEL.version}\n`;
}
