window.rulesdslPreviews("burning_wheel/skill.html", {});
