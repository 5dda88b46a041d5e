"""Integer codes shared by the Python facade and the kernels.

Geometry type codes are ordered so that a narrow-phase pair is always dispatched with
``type_a <= type_b`` (the pair is swapped and the normal flipped otherwise).
"""

GEOM_PLANE = 0
GEOM_SPHERE = 1
GEOM_CAPSULE = 2
GEOM_BOX = 3
GEOM_HULL = 4

GEOM_NAMES = {GEOM_PLANE: "plane", GEOM_SPHERE: "sphere", GEOM_CAPSULE: "capsule", GEOM_BOX: "box",
              GEOM_HULL: "hull"}

#: Maximum number of points in one contact manifold (Catto 001 §8: a box face gives up to 4).
MAX_MANIFOLD_POINTS = 4

#: Row kinds of the constraint-row store (DESIGN "Constraint rows").
ROW_CONTACT_NORMAL = 0
ROW_CONTACT_FRICTION = 1
ROW_JOINT = 2
ROW_LIMIT = 3
ROW_MOTOR = 4

#: Friction models.
FRICTION_COULOMB = 0   # |lambda_t| <= mu lambda_n, bound updated every sweep (Erleben 000 eq. 29)
FRICTION_FIXED = 1     # |lambda_t| <= mu m_c g, Catto 001 eq. 24-25

#: Joint types (tumble.joints; kernels in tumble._core.dynamics.joints).
JOINT_BALL = 0
JOINT_HINGE = 1
JOINT_SLIDER = 2
JOINT_DISTANCE = 3
JOINT_FIXED = 4

#: Rows of each joint type without limits and motor.
JOINT_BASE_ROWS = (3, 5, 5, 1, 6)
#: Most rows one joint can have (hinge or slider: 5 + 2 limit rows + 1 motor row).
JOINT_MAX_ROWS = 8

#: Motor modes.
MOTOR_NONE = 0
MOTOR_VELOCITY = 1
MOTOR_POSITION = 2
