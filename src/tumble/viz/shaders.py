"""GLSL 3.30 sources of the renderer.

Lighting (linear RGB, encoded to sRGB with gamma 1/2.2 at the end): colour = albedo (hemisphere
ambient + light ndl s) + light k_s (n.h)^48 s, with the hemisphere ambient mix(ground, sky, (1 + n_z)/2),
ndl = max(n.l, 0), h = (l + v)/|l + v| and s in [0, 1] the shadow factor. Distant fragments fade into
the horizon colour (fog between ``u_fog.x`` and ``u_fog.y`` metres from the eye).

Shadows: one directional light, a depth map rendered from it with an orthographic projection (depth =
(z - near) / (far - near), linear). Only the faces of closed meshes turned away from the light are drawn
into the map (front-face culling), so a lit face is never compared with its own depth. A fragment at p
with normal n looks up p' = p + n * ``u_normal_offset`` (normal-offset bias: 1.5 shadow texels in
metres, which keeps faces near the terminator from self-shadowing) and compares its light depth minus
``u_depth_bias`` (one texel in metres over the light's depth range) with the map; PCF: 4 hardware-
filtered (bilinear 2x2) comparisons at rotated-grid offsets of about 1.5 texels, averaged (a 16-texel
footprint, soft edges). Fragments outside the map's square or depth range are lit.
"""

QROT = """
vec3 qrot(vec4 q, vec3 v) { vec3 u = q.yzw; return v + 2.0 * cross(u, cross(u, v) + q.x * v); }
"""

# ---------------------------------------------------------------- primitives (instanced)
PRIM_VS = """
#version 330
uniform mat4 u_vp;
in vec3 in_pos; in vec3 in_normal; in float in_cap;
in vec3 i_pos; in vec4 i_quat; in vec4 i_scale; in vec3 i_color;
out vec3 v_world; out vec3 v_normal; flat out vec3 v_color;
""" + QROT + """
void main() {
    vec3 local = in_pos * i_scale.xyz + vec3(0.0, 0.0, in_cap * i_scale.w);
    v_world = i_pos + qrot(i_quat, local);
    v_normal = qrot(i_quat, in_normal / max(i_scale.xyz, vec3(1e-9)));
    v_color = i_color;
    gl_Position = u_vp * vec4(v_world, 1.0);
}
"""

PRIM_SHADOW_VS = """
#version 330
uniform mat4 u_vp;
in vec3 in_pos; in float in_cap;
in vec3 i_pos; in vec4 i_quat; in vec4 i_scale;
""" + QROT + """
void main() {
    vec3 local = in_pos * i_scale.xyz + vec3(0.0, 0.0, in_cap * i_scale.w);
    gl_Position = u_vp * vec4(i_pos + qrot(i_quat, local), 1.0);
}
"""

# ---------------------------------------------------------------- hulls (one merged soup, poses in a texture)
HULL_FETCH = """
uniform sampler2D u_inst;   // per hull geom 3 texels: (position, alive), orientation, (colour, 1)
uniform int u_per_row;
void fetch(float slot, out vec4 p, out vec4 q, out vec4 c) {
    int s = int(slot + 0.5);
    ivec2 base = ivec2((s % u_per_row) * 3, s / u_per_row);
    p = texelFetch(u_inst, base, 0);
    q = texelFetch(u_inst, base + ivec2(1, 0), 0);
    c = texelFetch(u_inst, base + ivec2(2, 0), 0);
}
"""

HULL_VS = """
#version 330
uniform mat4 u_vp;
in vec3 in_pos; in vec3 in_normal; in float in_slot;
out vec3 v_world; out vec3 v_normal; flat out vec3 v_color;
""" + QROT + HULL_FETCH + """
void main() {
    vec4 p, q, c;
    fetch(in_slot, p, q, c);
    v_world = p.xyz + qrot(q, in_pos);
    v_normal = qrot(q, in_normal);
    v_color = c.rgb;
    gl_Position = p.w > 0.5 ? u_vp * vec4(v_world, 1.0) : vec4(2.0, 2.0, 2.0, 1.0);  // not yet spawned: clipped
}
"""

HULL_SHADOW_VS = """
#version 330
uniform mat4 u_vp;
in vec3 in_pos; in float in_slot;
""" + QROT + HULL_FETCH + """
void main() {
    vec4 p, q, c;
    fetch(in_slot, p, q, c);
    gl_Position = p.w > 0.5 ? u_vp * vec4(p.xyz + qrot(q, in_pos), 1.0) : vec4(2.0, 2.0, 2.0, 1.0);
}
"""

DEPTH_FS = """
#version 330
void main() {}
"""

# ---------------------------------------------------------------- shading shared by the lit passes
SHADE = """
uniform vec3 u_eye;
uniform vec3 u_light_dir;      // unit, towards the light
uniform vec3 u_light_color;
uniform vec3 u_sky_ambient;
uniform vec3 u_ground_ambient;
uniform float u_specular;
uniform float u_fill;         // headlight fill (no shadow), fraction of the light colour
uniform sampler2DShadow u_shadow;
uniform mat4 u_light_vp;
uniform float u_texel;         // 1 / shadow map size
uniform float u_normal_offset; // [m]
uniform float u_depth_bias;    // depth units
uniform int u_shadows;
uniform vec3 u_fog_color;
uniform vec2 u_fog;            // fog start, end [m from the eye]

float shadow_factor(vec3 p, vec3 n) {
    if (u_shadows == 0) return 1.0;
    vec4 l = u_light_vp * vec4(p + n * u_normal_offset, 1.0);
    vec3 s = l.xyz / l.w * 0.5 + 0.5;
    if (s.x < 0.0 || s.y < 0.0 || s.x > 1.0 || s.y > 1.0 || s.z > 1.0) return 1.0;
    float z = s.z - u_depth_bias;
    float sum = texture(u_shadow, vec3(s.xy + vec2(-1.5, -0.5) * u_texel, z));
    sum += texture(u_shadow, vec3(s.xy + vec2(0.5, -1.5) * u_texel, z));
    sum += texture(u_shadow, vec3(s.xy + vec2(1.5, 0.5) * u_texel, z));
    sum += texture(u_shadow, vec3(s.xy + vec2(-0.5, 1.5) * u_texel, z));
    return 0.25 * sum;
}

vec3 shade(vec3 albedo, vec3 n, vec3 p) {
    vec3 v = normalize(u_eye - p);
    float ndl = dot(n, u_light_dir);
    float s = ndl > 0.0 ? shadow_factor(p, n) : 0.0;
    ndl = max(ndl, 0.0);
    vec3 amb = mix(u_ground_ambient, u_sky_ambient, 0.5 + 0.5 * n.z);
    vec3 h = normalize(u_light_dir + v);
    float spec = u_specular * pow(max(dot(n, h), 0.0), 48.0) * s * step(1e-4, ndl);
    amb += u_light_color * u_fill * max(dot(n, v), 0.0);
    vec3 c = albedo * (amb + u_light_color * ndl * s) + u_light_color * spec;
    float fog = smoothstep(u_fog.x, u_fog.y, length(p - u_eye));
    return mix(c, u_fog_color, fog);
}

vec4 encode(vec3 c) { return vec4(pow(clamp(c, 0.0, 1.0), vec3(1.0 / 2.2)), 1.0); }
"""

LIT_FS = """
#version 330
in vec3 v_world; in vec3 v_normal; flat in vec3 v_color;
out vec4 f_color;
""" + SHADE + """
void main() { f_color = encode(shade(v_color, normalize(v_normal), v_world)); }
"""

# ---------------------------------------------------------------- ground plane: anti-aliased checker
GROUND_VS = """
#version 330
uniform mat4 u_vp;
uniform vec3 u_origin; uniform vec3 u_ax; uniform vec3 u_ay;   // plane origin and in-plane axes
uniform vec2 u_center; uniform float u_half;                   // quad centre (plane coordinates), half size [m]
in vec2 in_uv;
out vec3 v_world; out vec2 v_plane;
void main() {
    v_plane = u_center + in_uv * u_half;
    v_world = u_origin + u_ax * v_plane.x + u_ay * v_plane.y;
    gl_Position = u_vp * vec4(v_world, 1.0);
}
"""

GROUND_FS = """
#version 330
uniform vec3 u_normal;
uniform float u_cell;             // checker cell [m]
uniform vec3 u_color_a; uniform vec3 u_color_b; uniform vec3 u_line_color;
in vec3 v_world; in vec2 v_plane;
out vec4 f_color;
""" + SHADE + """
void main() {
    vec2 p = v_plane / u_cell;
    vec2 w = max(fwidth(p), vec2(1e-4));
    // box-filtered checker: the analytic average of the +-1 checker over the pixel footprint
    vec2 i = 2.0 * (abs(fract((p - 0.5 * w) * 0.5) - 0.5) - abs(fract((p + 0.5 * w) * 0.5) - 0.5)) / w;
    float chk = 0.5 - 0.5 * i.x * i.y;
    vec2 g = abs(fract(p - 0.5) - 0.5) / w;                         // distance to a cell edge [px]
    float line = (1.0 - min(min(g.x, g.y), 1.0)) * clamp(1.0 - 3.0 * max(w.x, w.y), 0.0, 1.0);
    vec3 albedo = mix(mix(u_color_a, u_color_b, chk), u_line_color, 0.6 * line);
    vec3 n = gl_FrontFacing ? u_normal : -u_normal;
    f_color = encode(shade(albedo, n, v_world));
}
"""

# ---------------------------------------------------------------- faint grid (recordings without a plane)
GRID_FS = """
#version 330
uniform float u_cell; uniform float u_half; uniform vec2 u_center; uniform vec3 u_line_color; uniform float u_alpha;
in vec3 v_world; in vec2 v_plane;
out vec4 f_color;
void main() {
    vec2 p = v_plane / u_cell;
    vec2 w = max(fwidth(p), vec2(1e-4));
    vec2 g = abs(fract(p - 0.5) - 0.5) / w;
    float line = (1.0 - min(min(g.x, g.y), 1.0)) * clamp(1.0 - 3.0 * max(w.x, w.y), 0.0, 1.0);
    float fade = 1.0 - smoothstep(0.5, 1.0, length(v_plane - u_center) / u_half);
    f_color = vec4(pow(u_line_color, vec3(1.0 / 2.2)), u_alpha * line * fade);
}
"""

# ---------------------------------------------------------------- sky: gradient by view direction
SKY_VS = """
#version 330
in vec2 in_uv;
out vec2 v_ndc;
void main() { v_ndc = in_uv; gl_Position = vec4(in_uv, 0.0, 1.0); }
"""

SKY_FS = """
#version 330
uniform mat4 u_inv_vp; uniform vec3 u_eye;
uniform vec3 u_horizon; uniform vec3 u_zenith;
in vec2 v_ndc;
out vec4 f_color;
void main() {
    vec4 a = u_inv_vp * vec4(v_ndc, 1.0, 1.0);
    vec3 d = normalize(a.xyz / a.w - u_eye);
    float t = pow(clamp(d.z, 0.0, 1.0), 0.6);
    f_color = vec4(pow(mix(u_horizon, u_zenith, t), vec3(1.0 / 2.2)), 1.0);
}
"""

# ---------------------------------------------------------------- FXAA (Lottes' reduced FXAA, luma from rgb)
FXAA_FS = """
#version 330
uniform sampler2D u_tex;
uniform vec2 u_inv;   // 1 / image size [1/px]
out vec4 f_color;
float luma(vec3 c) { return dot(c, vec3(0.299, 0.587, 0.114)); }
void main() {
    vec2 uv = gl_FragCoord.xy * u_inv;
    ivec2 p = ivec2(gl_FragCoord.xy);
    ivec2 hi = textureSize(u_tex, 0) - 1;
    vec3 rgbM = texelFetch(u_tex, p, 0).rgb;
    vec3 rgbNW = texelFetch(u_tex, clamp(p + ivec2(-1, -1), ivec2(0), hi), 0).rgb;
    vec3 rgbNE = texelFetch(u_tex, clamp(p + ivec2(1, -1), ivec2(0), hi), 0).rgb;
    vec3 rgbSW = texelFetch(u_tex, clamp(p + ivec2(-1, 1), ivec2(0), hi), 0).rgb;
    vec3 rgbSE = texelFetch(u_tex, clamp(p + ivec2(1, 1), ivec2(0), hi), 0).rgb;
    float lM = luma(rgbM), lNW = luma(rgbNW), lNE = luma(rgbNE), lSW = luma(rgbSW), lSE = luma(rgbSE);
    float lMin = min(lM, min(min(lNW, lNE), min(lSW, lSE)));
    float lMax = max(lM, max(max(lNW, lNE), max(lSW, lSE)));
    if (lMax - lMin < max(0.0625, 0.166 * lMax)) { f_color = vec4(rgbM, 1.0); return; }
    vec2 dir = vec2(-((lNW + lNE) - (lSW + lSE)), (lNW + lSW) - (lNE + lSE));
    float reduce = max((lNW + lNE + lSW + lSE) * (0.25 / 8.0), 1.0 / 128.0);
    float rcp = 1.0 / (min(abs(dir.x), abs(dir.y)) + reduce);
    dir = clamp(dir * rcp, vec2(-8.0), vec2(8.0)) * u_inv;
    vec3 a = 0.5 * (texture(u_tex, uv + dir * (1.0 / 3.0 - 0.5)).rgb
                    + texture(u_tex, uv + dir * (2.0 / 3.0 - 0.5)).rgb);
    vec3 b = 0.5 * a + 0.25 * (texture(u_tex, uv - 0.5 * dir).rgb + texture(u_tex, uv + 0.5 * dir).rgb);
    float lB = luma(b);
    f_color = vec4((lB < lMin || lB > lMax) ? a : b, 1.0);
}
"""
